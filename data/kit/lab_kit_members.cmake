# The members of the lab kit, in archive order: source paths relative to the project root.
# Each lands in the kit folder under its own file name; MANIFEST.json, generated, comes last.
# Included by data/kit/CMakeLists.txt (build dependencies) and build_lab_kit.cmake (the build),
# so the list is written once.
set(ITERAGPU_LAB_KIT_NAME iteragpu-lab-v1)
set(ITERAGPU_LAB_KIT_SOURCES
  data/kit/README.md
  examples/mesure-memoire.ipynb
  data/protocole-qualite.md
  data/resultats-bruts.csv
  data/tarifs-forfaits.csv
  LICENSE.txt
)
