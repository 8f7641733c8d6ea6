#!/usr/bin/env python3
"""The examples of README.md and docs/, run as written and compared with what they show.

    readme_examples.py --bin BUILD/bin [--python-path BUILD/python] [--gpu] [--without-lab-kit] [FILE.md ...]
    readme_examples.py --extract NAME [FILE.md ...]      # print a marked block, verbatim
    readme_examples.py --list [FILE.md ...]              # the blocks found, and where

The files are README.md and every docs/**/*.md of the source tree unless named; a difference
is reported with its file and line.

What is run:
  * every ```console block: each line starting with "$ " is a command (a line ending in a
    backslash continues it), the lines up to the next command are what it prints (stdout
    and stderr together). The command runs with bash in a scratch folder outside the
    source tree, filled by `examples/make-example-inputs` (the script the docs tell their
    readers to run) with every input the examples name, with BUILD/bin first on PATH, so
    `iteragpu` is the built tool; a Hub id is served by the test suite's loopback Hub
    (tests/hub/hub_server.py) through HF_ENDPOINT;
  * every ```pycon block: a doctest (">>> " statements and the output they print), run with
    `import iteragpu` from --python-path, in the same scratch folder.
A block preceded by the comment `<!-- example: gpu -->` needs a GPU: it runs with --gpu
only (scripts/gpu-check runs it on the GPU machine); without --gpu it is listed as not run.
A block preceded by `<!-- example: NAME -->` (any other name) is a set-up block that
scripts/gpu-check takes with --extract NAME (from whichever file holds it) and runs
verbatim; it is not run here.
The `kit verify` examples read the lab kit make-example-inputs unpacks (BUILD/iteragpu-lab-v1.zip,
or one it builds; both need Info-ZIP zip); a missing kit is a failure unless --without-lab-kit
says the build had no zip, and then those blocks are listed as not run.

How output is compared (the normaliser, all of it):
  * trailing spaces and trailing empty lines are ignored;
  * a line holding only "..." in a file stands for any number of lines (none included):
    the file shows that output trimmed, and says so;
  * the scratch folder's path prints as nothing (paths in it are relative); the build's data
    folder prints as /usr/local/share/iteragpu, where `cmake --install build` puts it; the
    date of the day (UTC) prints as 2026-12-04, the day the outputs shown were recorded;
  * in gpu blocks only, numbers with a decimal point or an exponent (times, rates, spreads),
    dates and times of day, and the card's name after the device ("cuda:0 (NVIDIA ...)": the
    GPU machine may hold another card than the one shown) are not compared, and runs of
    spaces compare as one (column widths follow the times); integers (bytes, counts) are
    compared;
  * pycon blocks compare as doctest does with ELLIPSIS and NORMALIZE_WHITESPACE.
Also: a Markdown table row cut from its table by a blank line is a failure, and so is a
file or folder of the source tree named in backquotes (`libiteragpu/...`, `cli/...`,
`tests/...`: a reading path, a script) that does not exist, and so is an example's input
that exists neither in the scratch folder (after the examples ran) nor in the source tree:
a name in backquotes or in a sh, console or pycon block given to `--checkpoint`, `--model`,
`--measurement`, `--catalog`, `checkpoint=`, `model=`, `measurement=`, `read_measurement(`
or `kit verify` (`mini-llama-int4`, `examples/results/...`); a text shaped `org/name` that
is no such path is a Hub id, as the tool reads it. A path holding a word in capitals
(`data/schema/NAME.schema.json`, `DIR`) stands for a family of files and is not checked.
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

RECORDED_ON = "2026-12-04"  # the day the outputs shown were recorded
MARKER = re.compile(r"^<!--\s*example:\s*([A-Za-z0-9_.-]+)\s*-->\s*$")


class Block:
    def __init__(self, language, lines, line_number, marker, section, path=None):
        self.path = path
        self.language = language
        self.lines = lines
        self.line_number = line_number  # of the opening fence, 1-based
        self.marker = marker
        self.section = section

    @property
    def where(self):
        return "%s line %d (%s)" % (shown(self.path), self.line_number, self.section)


SOURCE = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


def shown(path):
    """A file as a reader finds it: relative to the source tree when it is in it."""
    if path is None:
        return "README.md"
    relative = os.path.relpath(os.path.abspath(path), SOURCE)
    return path if relative.startswith("..") else relative


def default_files():
    """README.md and every docs/**/*.md, in a fixed order."""
    found = [os.path.join(SOURCE, "README.md")]
    for folder, subfolders, files in os.walk(os.path.join(SOURCE, "docs")):
        subfolders.sort()
        found += [os.path.join(folder, f) for f in sorted(files) if f.endswith(".md")]
    return found


def read_blocks(path):
    """Every fenced block of a Markdown file with its info string, marker and section heading."""
    blocks, section, marker, fence = [], "", None, None
    with open(path, encoding="utf-8") as f:
        lines = f.read().split("\n")
    for number, line in enumerate(lines, 1):
        if fence is not None:
            if line.startswith("```"):
                blocks.append(Block(fence[0], fence[2], fence[1], fence[3], section, path))
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
            found.append("%s line %d: a table row outside any table (a blank line above it?): %s"
                         % (shown(path), number, line[:80]))
    return found


SOURCE_PATH = re.compile(r"`((?:libiteragpu|cli|python|tests|scripts|examples|data|docs)/[A-Za-z0-9_./+-]*)`")


def missing_source_paths(path, source):
    """Source-tree paths a file names in backquotes that do not exist (a file moved)."""
    with open(path, encoding="utf-8") as f:
        text = f.read()
    found = []
    for match in SOURCE_PATH.finditer(text):
        name = match.group(1)
        if re.search(r"[A-Z]{3,}", name) or os.path.exists(os.path.join(source, name.rstrip("/"))):
            continue
        found.append("%s line %d names `%s`, which is not in the source tree"
                     % (shown(path), text.count("\n", 0, match.start()) + 1, name))
    return found


INLINE_CODE = re.compile(r"`([^`\n]+)`")
INPUT_ARGUMENT = re.compile(r"(?:--(?:checkpoint|model|measurement|catalog)[ =]+|"
                            r"\b(?:checkpoint|model|measurement)=[\"']|read_measurement\([\"']|"
                            r"\bkit verify +)([^\s\"'`),\\]+)")
HUB_ID = re.compile(r"^[A-Za-z0-9][\w.-]*/[\w.-]+(?:@[\w./-]+)?$")


def example_inputs(path):
    """[(line, name)]: the inputs a file's examples and backquoted commands name."""
    with open(path, encoding="utf-8") as f:
        lines = f.read().split("\n")
    found, fence = [], None
    for number, line in enumerate(lines, 1):
        if line.startswith("```"):
            fence = None if fence is not None else line[3:].strip()
            continue
        if fence is None:
            spans = INLINE_CODE.findall(line)
        elif fence in ("sh", "console", "pycon", "python"):
            spans = [line]
        else:
            continue
        for span in spans:
            found += [(number, m.group(1)) for m in INPUT_ARGUMENT.finditer(span)]
    return found


def missing_example_inputs(path, work, skip_kit):
    """Inputs named by a file that exist neither in the scratch folder nor in the source tree."""
    found = []
    for number, name in example_inputs(path):
        if re.search(r"[A-Z]{3,}|[~$<>*]|\.\.\.", name) or (skip_kit and name.startswith("iteragpu-lab-v1")):
            continue  # a placeholder (DIR, ~/models/...), or the kit this build could not make
        if any(os.path.exists(os.path.join(root, name.rstrip("/"))) for root in (work, SOURCE)):
            continue
        if HUB_ID.match(name) and not name.startswith(".") and \
                not os.path.exists(os.path.join(work, name.split("/")[0])):
            continue  # not a path here, so the tool reads it as a Hub id
        found.append("%s line %d names `%s` as an example's input, which neither "
                     "examples/make-example-inputs nor the source tree provides" % (shown(path), number, name))
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

def make_inputs(work, bin_dir):
    """The files the examples read, by the names they give them: what make-example-inputs
    writes (the script the docs point their readers to), and the loopback Hub's repositories."""
    subprocess.run([sys.executable, os.path.join(SOURCE, "examples", "make-example-inputs"), work,
                    "--build", os.path.dirname(bin_dir)], check=True, stdout=subprocess.DEVNULL)
    # The repositories a Hub id names, served on the loopback as the Hugging Face Hub serves
    # them (tests/hub/hub_server.py); the examples' commands reach it through HF_ENDPOINT.
    sys.path.insert(0, os.path.join(SOURCE, "tests", "hub"))
    import hub_repositories
    hub_repositories.write_hub(os.path.join(work, ".hub"))


# --- Running and comparing ----------------------------------------------------------------

NUMBER_WITH_DECIMALS = re.compile(r"\d[\d,]*\.\d+(?:[eE][-+]?\d+)?|\d+[eE][-+]?\d+")
DATE_OR_TIME = re.compile(r"\d{4}-\d{2}-\d{2}|\d{2}:\d{2}(?::\d{2})?")
CARD_NAME = re.compile(r"(cuda:\d+) \(NVIDIA [^)]*\)")


def normalised(lines, gpu):
    out = [line.rstrip() for line in lines]
    while out and not out[-1]:
        out.pop()
    if gpu:
        out = [re.sub(" +", " ", DATE_OR_TIME.sub("<when>", NUMBER_WITH_DECIMALS.sub(
                   "<decimal>", CARD_NAME.sub(r"\1 (<card>)", line)))) for line in out]
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
    port_file = os.path.join(work, ".hub-port")
    server = subprocess.Popen([sys.executable, os.path.join(SOURCE, "tests", "hub", "hub_server.py"),
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
            failures.append("%s: `%s` (exit %d) printed:\n%s\n-- %s shows:\n%s" % (
                block.where, command.split("\n")[0], result.returncode, "\n".join(actual),
                shown(block.path), "\n".join(normalised(expected, gpu))))
    return failures


def run_pycon(block, work, python_path):
    if python_path and python_path not in sys.path:
        sys.path.insert(0, python_path)
    parser = doctest.DocTestParser()
    test = parser.get_doctest("\n".join(block.lines), {"__name__": "readme"}, block.where,
                              shown(block.path), block.line_number)
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
    arguments.add_argument("files", nargs="*", metavar="FILE.md",
                           help="the Markdown files (default: README.md and docs/**/*.md)")
    arguments.add_argument("--bin", help="the build's bin folder (iteragpu)")
    arguments.add_argument("--python-path", help="the folder holding the iteragpu package")
    arguments.add_argument("--gpu", action="store_true", help="run the blocks marked gpu too")
    arguments.add_argument("--without-lab-kit", action="store_true",
                           help="the build made no lab kit (no zip): do not run the kit examples")
    arguments.add_argument("--extract", metavar="NAME", help="print the block marked NAME")
    arguments.add_argument("--list", action="store_true", help="list the blocks and what runs them")
    options = arguments.parse_args()
    files = options.files or default_files()
    blocks = [b for path in files for b in read_blocks(path)]
    if options.extract:
        named = [b for b in blocks if b.marker == options.extract]
        if len(named) != 1:
            sys.exit("readme_examples: %d blocks are marked %r in %s; expected one" % (
                len(named), options.extract, ", ".join(shown(f) for f in files)))
        print("\n".join(named[0].lines))
        return 0
    runnable = [b for b in blocks if b.language in ("console", "pycon")]
    if options.list:
        for b in blocks:
            kind = ("gpu-check --extract " + b.marker if b.marker not in (None, "gpu") else
                    "gpu" if b.marker == "gpu" else "run" if b in runnable else "not run")
            print("%-32s %5d  %-8s %-28s %s" % (shown(b.path), b.line_number, b.language or "-", kind, b.section))
        return 0
    if not options.bin:
        arguments.error("--bin is required to run the examples")
    failures, ran, left, no_kit = [], 0, 0, 0
    for path in files:
        failures += broken_tables(path) + missing_source_paths(path, SOURCE)
    work = tempfile.mkdtemp(prefix="iteragpu-readme.")
    hub_server = None
    try:
        make_inputs(work, os.path.abspath(options.bin))
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
        for path in files:  # after the examples ran: the files they write are there too
            failures += missing_example_inputs(path, work, options.without_lab_kit)
    finally:
        if hub_server:
            hub_server.terminate()
            hub_server.wait()
        shutil.rmtree(work, ignore_errors=True)
    for failure in failures:
        print(failure + "\n")
    print("readme_examples: %d blocks run from %d files, %d differ from what the files show, "
          "%d need a GPU (not run here)" % (ran, len(files), len(failures), left)
          + (", %d need the lab kit (not built here)" % no_kit if no_kit else ""))
    return 1 if failures or ran == 0 else 0


if __name__ == "__main__":
    sys.exit(main())
