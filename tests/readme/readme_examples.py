#!/usr/bin/env python3
"""The README's examples, run as written and compared with what the README shows.

    readme_examples.py --bin BUILD/bin [--python-path BUILD/python] [--gpu] [--without-lab-kit] [README.md]
    readme_examples.py --extract NAME [README.md]      # print a marked block, verbatim
    readme_examples.py --list [README.md]              # the blocks found, and where

What is run:
  * every ```console block: each line starting with "$ " is a command (a line ending in a
    backslash continues it), the lines up to the next command are what it prints (stdout
    and stderr together). The command runs with bash in a scratch folder that holds the
    inputs the examples name (below), with BUILD/bin first on PATH, so `iteragpu` is the
    built tool;
  * every ```pycon block: a doctest (">>> " statements and the output they print), run with
    `import iteragpu` from --python-path, in the same scratch folder.
A block preceded by the comment `<!-- example: gpu -->` needs a GPU: it runs with --gpu
only (scripts/gpu-check runs it on the GPU machine); without --gpu it is listed as not run.
A block preceded by `<!-- example: NAME -->` (any other name) is a set-up block that
scripts/gpu-check takes with --extract NAME and runs verbatim; it is not run here.
The `kit verify` examples read the lab kit the build made (BUILD/iteragpu-lab-v1.zip, which
needs Info-ZIP zip); a missing kit is a failure unless --without-lab-kit says the build had
no zip, and then those blocks are listed as not run.

How output is compared (the normaliser, all of it):
  * trailing spaces and trailing empty lines are ignored;
  * a line holding only "..." in the README stands for any number of lines (none included):
    the README shows that output trimmed, and says so;
  * the scratch folder's path prints as nothing (paths in it are relative); the build's data
    folder prints as /usr/local/share/iteragpu, where `cmake --install build` puts it; the
    date of the day (UTC) prints as 2026-12-04, the day the README's outputs were recorded;
  * in gpu blocks only, numbers with a decimal point or an exponent (times, rates, spreads)
    and dates and times of day are not compared, and runs of spaces compare as one (column
    widths follow the times); integers (bytes, counts) are compared;
  * pycon blocks compare as doctest does with ELLIPSIS and NORMALIZE_WHITESPACE.
Also: a Markdown table row cut from its table by a blank line is a failure, and so is a
file or folder of the source tree named in backquotes (`libiteragpu/...`, `cli/...`,
`tests/...`: a reading path, a script) that does not exist; a path holding a word in
capitals (`data/schema/NAME.schema.json`) stands for a family of files and is not checked.
Exit status 0 when every block that ran matched; 1 otherwise, each difference shown.
"""

import argparse
import doctest
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
import time
import zipfile

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "support"))
from safetensors_files import write_safetensors  # noqa: E402

RECORDED_ON = "2026-12-04"  # the day the README's outputs were recorded
MARKER = re.compile(r"^<!--\s*example:\s*([A-Za-z0-9_.-]+)\s*-->\s*$")


class Block:
    def __init__(self, language, lines, line_number, marker, section):
        self.language = language
        self.lines = lines
        self.line_number = line_number  # of the opening fence, 1-based
        self.marker = marker
        self.section = section

    @property
    def where(self):
        return "README line %d (%s)" % (self.line_number, self.section)


def read_blocks(path):
    """Every fenced block of the README with its info string, marker and section heading."""
    blocks, section, marker, fence = [], "", None, None
    with open(path, encoding="utf-8") as f:
        lines = f.read().split("\n")
    for number, line in enumerate(lines, 1):
        if fence is not None:
            if line.startswith("```"):
                blocks.append(Block(fence[0], fence[2], fence[1], fence[3], section))
                fence = None
            else:
                fence[2].append(line)
            continue
        if line.startswith("```"):
            fence = (line[3:].strip().split(" ")[0], number, [], marker)
            marker = None
        elif line.startswith("#"):
            section, marker = line.lstrip("#").strip(), None
        elif MARKER.match(line):
            marker = MARKER.match(line).group(1)
        elif line.strip():
            marker = None
    return blocks


def broken_tables(path):
    """Table rows a blank line has cut from their table (Markdown then shows them as text)."""
    with open(path, encoding="utf-8") as f:
        lines = f.read().split("\n")
    found, fenced = [], False
    for number, line in enumerate(lines, 1):
        if line.startswith("```"):
            fenced = not fenced
        elif not fenced and line.startswith("|") and not lines[number - 2].startswith("|") and \
                not (number < len(lines) and lines[number].startswith("| ---")):
            found.append("README line %d: a table row outside any table (a blank line above it?): %s"
                         % (number, line[:80]))
    return found


SOURCE_PATH = re.compile(r"`((?:libiteragpu|cli|python|tests|scripts|examples|data|docs)/[A-Za-z0-9_./+-]*)`")


def missing_source_paths(path, source):
    """Source-tree paths the README names in backquotes that do not exist (a file moved)."""
    with open(path, encoding="utf-8") as f:
        text = f.read()
    found = []
    for match in SOURCE_PATH.finditer(text):
        name = match.group(1)
        if re.search(r"[A-Z]{3,}", name) or os.path.exists(os.path.join(source, name.rstrip("/"))):
            continue
        found.append("README line %d names `%s`, which is not in the source tree"
                     % (text.count("\n", 0, match.start()) + 1, name))
    return found


def console_commands(block):
    """[(command, expected lines)] of a console block."""
    commands, current = [], None
    continued = False
    for line in block.lines:
        if continued:
            current[0] += "\n" + line
            continued = line.endswith("\\")
        elif line.startswith("$ "):
            current = [line[2:], []]
            commands.append(current)
            continued = line.endswith("\\")
        elif current is None:
            raise ValueError("%s: output before the first command: %r" % (block.where, line))
        else:
            current[1].append(line)
    return [(c, e) for c, e in commands]


# --- Inputs the examples name -------------------------------------------------------------

def make_inputs(work, source, bin_dir):
    """The files the README's examples read, by the names the README gives them."""
    # Copied, not linked: the commands print the paths they were given, resolved.
    shutil.copytree(os.path.join(source, "examples", "results"), os.path.join(work, "examples", "results"))
    # A two-shard Llama-like checkpoint: bf16 weights, fp32 norms, int4 MLP weights packed
    # in U8 with fp16 scales (group size 128).
    folder = os.path.join(work, "mini-llama-int4")
    os.mkdir(folder)
    first = [("model.embed_tokens.weight", "BF16", [32000, 2048]),
             ("model.layers.0.input_layernorm.weight", "F32", [2048]),
             ("model.layers.0.mlp.gate_proj.qweight", "U8", [8448, 1024]),
             ("model.layers.0.mlp.gate_proj.scales", "F16", [8448, 16]),
             ("model.layers.0.mlp.up_proj.qweight", "U8", [8448, 1024]),
             ("model.layers.0.mlp.up_proj.scales", "F16", [8448, 16]),
             ("model.layers.0.self_attn.o_proj.weight", "BF16", [2048, 4096]),
             ("model.layers.0.self_attn.q_proj.weight", "BF16", [4096, 2048])]
    second = [("model.norm.weight", "F32", [2048]), ("lm_head.weight", "BF16", [32000, 2048])]
    names = ["model-00001-of-00002.safetensors", "model-00002-of-00002.safetensors"]
    total = write_safetensors(os.path.join(folder, names[0]), first, header_bytes=992)
    total += write_safetensors(os.path.join(folder, names[1]), second, header_bytes=216)
    weight_map = {name: names[0] for name, _, _ in first}
    weight_map.update({name: names[1] for name, _, _ in second})
    with open(os.path.join(folder, "model.safetensors.index.json"), "w") as f:
        json.dump({"metadata": {"total_size": total}, "weight_map": weight_map}, f, indent=2)
    # A file that is not safetensors (its first 8 bytes read as a header length), and the
    # second shard cut 2 bytes short.
    write_safetensors(os.path.join(work, "pytorch_model.safetensors"), second, length=85966670672)
    write_safetensors(os.path.join(work, "cut.safetensors"), second, header_bytes=216, cut=2)
    # The repositories a Hub id names, served on the loopback as the Hugging Face Hub serves
    # them (tests/hub/hub_server.py); the examples' commands reach it through HF_ENDPOINT.
    sys.path.insert(0, os.path.join(source, "tests", "hub"))
    import hub_repositories
    hub_repositories.write_hub(os.path.join(work, ".hub"))
    # The lab kit the build made, unpacked as its user would.
    kit = os.path.join(os.path.dirname(bin_dir), "iteragpu-lab-v1.zip")
    if os.path.exists(kit):
        zipfile.ZipFile(kit).extractall(work)


# --- Running and comparing ----------------------------------------------------------------

NUMBER_WITH_DECIMALS = re.compile(r"\d[\d,]*\.\d+(?:[eE][-+]?\d+)?|\d+[eE][-+]?\d+")
DATE_OR_TIME = re.compile(r"\d{4}-\d{2}-\d{2}|\d{2}:\d{2}(?::\d{2})?")


def normalised(lines, gpu):
    out = [line.rstrip() for line in lines]
    while out and not out[-1]:
        out.pop()
    if gpu:
        out = [re.sub(" +", " ", DATE_OR_TIME.sub("<when>", NUMBER_WITH_DECIMALS.sub("<decimal>", line)))
               for line in out]
    return out


def matches(expected, actual):
    """True when actual fits expected, a line "..." in expected standing for any lines."""
    if not expected:
        return not actual
    if expected[0].strip() == "...":
        return any(matches(expected[1:], actual[k:]) for k in range(len(actual) + 1))
    return bool(actual) and expected[0] == actual[0] and matches(expected[1:], actual[1:])


def start_hub(work):
    """The loopback Hub of make_inputs; returns the server process and its endpoint."""
    source = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
    port_file = os.path.join(work, ".hub-port")
    server = subprocess.Popen([sys.executable, os.path.join(source, "tests", "hub", "hub_server.py"),
                               "--root", os.path.join(work, ".hub"), "--port-file", port_file])
    for _ in range(200):
        if os.path.exists(port_file):
            with open(port_file) as f:
                return server, "http://127.0.0.1:%d" % int(f.read())
        time.sleep(0.05)
    server.kill()
    sys.exit("readme_examples: the loopback Hub did not start")


def run_console(block, work, bin_dir, gpu, hub_endpoint):
    failures = []
    environment = {k: v for k, v in os.environ.items()
                   if not k.startswith(("ITERAGPU_", "PYTORCH_", "CUBLAS", "HF_", "HUGGING"))
                   and k not in ("NO_COLOR", "COLUMNS")}
    environment.update(PATH=bin_dir + os.pathsep + environment.get("PATH", "/usr/bin:/bin"),
                       TERM="dumb", LC_ALL="C.UTF-8", TZ="UTC", HF_ENDPOINT=hub_endpoint,
                       HF_HOME=os.path.join(work, ".hf-home"))
    build_root = os.path.dirname(os.path.abspath(bin_dir))
    for command, expected in console_commands(block):
        result = subprocess.run(["bash", "-c", command], cwd=work, env=environment, stdin=subprocess.DEVNULL,
                                stdout=subprocess.PIPE, stderr=subprocess.STDOUT, timeout=600)
        text = result.stdout.decode("utf-8", "replace")
        text = (text.replace(os.path.realpath(work) + "/", "")
                .replace(os.path.join(build_root, "share", "iteragpu"), "/usr/local/share/iteragpu")
                .replace(time.strftime("%Y-%m-%d", time.gmtime()), RECORDED_ON)
                .replace(hub_endpoint, "http://127.0.0.1:PORT"))
        actual = normalised(text.split("\n"), gpu)
        if not matches(normalised(expected, gpu), actual):
            failures.append("%s: `%s` (exit %d) printed:\n%s\n-- the README shows:\n%s" % (
                block.where, command.split("\n")[0], result.returncode, "\n".join(actual),
                "\n".join(normalised(expected, gpu))))
    return failures


def run_pycon(block, work, python_path):
    if python_path and python_path not in sys.path:
        sys.path.insert(0, python_path)
    parser = doctest.DocTestParser()
    test = parser.get_doctest("\n".join(block.lines), {"__name__": "readme"}, block.where,
                              "README.md", block.line_number)
    runner = doctest.DocTestRunner(optionflags=doctest.ELLIPSIS | doctest.NORMALIZE_WHITESPACE)
    here = os.getcwd()
    os.chdir(work)
    report = []
    try:
        runner.run(test, out=report.append)
    finally:
        os.chdir(here)
    return ["".join(report)] if runner.failures else []


def main():
    arguments = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    arguments.add_argument("readme", nargs="?", default=os.path.join(os.path.dirname(__file__), "..", "..", "README.md"))
    arguments.add_argument("--bin", help="the build's bin folder (iteragpu)")
    arguments.add_argument("--python-path", help="the folder holding the iteragpu package")
    arguments.add_argument("--gpu", action="store_true", help="run the blocks marked gpu too")
    arguments.add_argument("--without-lab-kit", action="store_true",
                           help="the build made no lab kit (no zip): do not run the kit examples")
    arguments.add_argument("--extract", metavar="NAME", help="print the block marked NAME")
    arguments.add_argument("--list", action="store_true", help="list the blocks and what runs them")
    options = arguments.parse_args()
    blocks = read_blocks(options.readme)
    if options.extract:
        named = [b for b in blocks if b.marker == options.extract]
        if len(named) != 1:
            sys.exit("readme_examples: %d blocks are marked %r; expected one" % (len(named), options.extract))
        print("\n".join(named[0].lines))
        return 0
    runnable = [b for b in blocks if b.language in ("console", "pycon")]
    if options.list:
        for b in blocks:
            kind = ("gpu-check --extract " + b.marker if b.marker not in (None, "gpu") else
                    "gpu" if b.marker == "gpu" else "run" if b in runnable else "not run")
            print("%5d  %-8s %-28s %s" % (b.line_number, b.language or "-", kind, b.section))
        return 0
    if not options.bin:
        arguments.error("--bin is required to run the examples")
    source = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
    failures, ran, left, no_kit = broken_tables(options.readme), 0, 0, 0
    failures += missing_source_paths(options.readme, source)
    work = tempfile.mkdtemp(prefix="iteragpu-readme.")
    hub_server = None
    try:
        make_inputs(work, source, os.path.abspath(options.bin))
        hub_server, hub_endpoint = start_hub(work)
        for block in runnable:
            gpu = block.marker == "gpu"
            if gpu and not options.gpu:
                left += 1
                continue
            if options.without_lab_kit and block.language == "console" and any(
                    c.startswith("iteragpu kit ") for c, _ in console_commands(block)):
                no_kit += 1
                continue
            ran += 1
            if block.language == "console":
                failures += run_console(block, work, os.path.abspath(options.bin), gpu, hub_endpoint)
            else:
                failures += run_pycon(block, work, options.python_path and os.path.abspath(options.python_path))
    finally:
        if hub_server:
            hub_server.terminate()
            hub_server.wait()
        shutil.rmtree(work, ignore_errors=True)
    for failure in failures:
        print(failure + "\n")
    print("readme_examples: %d blocks run, %d differ from the README, %d need a GPU (not run here)"
          % (ran, len(failures), left)
          + (", %d need the lab kit (not built here)" % no_kit if no_kit else ""))
    return 1 if failures or ran == 0 else 0


if __name__ == "__main__":
    sys.exit(main())
