#!/usr/bin/env python3
"""Masks, in place, what differs between two recordings of tests/golden/record_outputs.sh
that no code change caused. Everything else stays byte for byte.

  mask_outputs.py --build-dir DIR --bin-dir DIR --work-dir DIR OUT_DIR

1. Where the build and the run are (paths, not behaviour): the bin folder -> <BIN>, the build
   folder (the catalog in <BUILD>/share/iteragpu) -> <BUILD>, the temporary folder -> <WORK>.
2. The host's identity (the same build on another machine prints other values): the kernel
   release, the OS name (PRETTY_NAME of /etc/os-release), the C library and the architecture,
   each replaced where its exact value appears (<KERNEL>, <OS>, <LIBC>, <ARCH>); and in
   iteragpu's build description "g++ 12.2.0, Release, LibTorch backend plugin built" the
   compiler and the build type (<COMPILER>, <BUILD-TYPE>), not whether the plugin was built;
   the LibTorch it was built against (" against LibTorch 2.1.2 (CPU only)", CUDA on a GPU
   machine) is removed.
3. Host wall-clock times, measured anew by every run. Only the host clock: the test double's
   GPU event time is a constant (250 us) and is kept, as are every byte count and every count
   of repeats. Masked:
   - measure: each phase's "host_seconds" (JSON) and "host s" column (text, digits -> #);
     the warm repeats' host spread (the "host_seconds" object but its "count"; the text's
     "host" row);
   - the timing warnings the host times decide (high_cv, below_timer_resolution,
     first_repeat_outlier on the host clock) are removed where they are listed (JSON arrays,
     text lines, compare's summaries), and the text's "no warnings" line with them (it is
     printed only when no warning is left); few_repeats and GPU event warnings are kept;
   - measure --device all: "warm_forward_host_seconds_median" and the "warm fwd host ms"
     column; sweep: the same JSON member and the "warm fwd ms" column;
   - compare: the host.median/host.iqr/host.cv rows (values, ratios and their "same" flag or
     its mark), the timing-warnings row's "same" flag or mark, "warm host median xN" and
     its "(within the repeats' IQR)" in the findings, and in the text table of warm forward
     times, whose column widths follow the host figures, runs of spaces are squeezed.
Cases named "...-h200..." compare the fixed H200 files of examples/results: what they print
(times, compiler, system) is data read from those files, so only 1 applies to them.
"""
import argparse
import csv
import io
import os
import platform
import re
import sys

# Cases that compare the fixed H200 files of examples/results: their times, compiler and
# system are data read from the files, not measured or seen by the run: only paths are masked.
FIXED_DATA = re.compile(r"-h200")
TIMED_HOST_WARNINGS = ("high_cv", "below_timer_resolution", "first_repeat_outlier")
MASK = "<host-time>"


def host_identity():
    values = {}
    values["<KERNEL>"] = platform.release()
    try:
        with open("/etc/os-release", encoding="utf-8") as f:
            for line in f:
                if line.startswith("PRETTY_NAME="):
                    values["<OS>"] = line.split("=", 1)[1].strip().strip('"')
    except OSError:
        pass
    try:
        libc = os.confstr("CS_GNU_LIBC_VERSION")  # "glibc 2.36", as iteragpu writes it
        if libc:
            values["<LIBC>"] = libc
    except (ValueError, OSError):
        pass
    values["<ARCH>"] = platform.machine()
    return {mask: value for mask, value in values.items() if value and len(value) >= 3}


def digits_to_hash(text):
    return re.sub(r"[0-9]", "#", text)


def drop_timed_items(listing):
    """ "few_repeats (host), high_cv (host)" -> "few_repeats (host)" ("none" when empty)."""
    items = [item for item in listing.split(", ")
             if not any(item == code + " (host)" for code in TIMED_HOST_WARNINGS)]
    return ", ".join(items) if items else "none"


def mask_warning_summary(line):
    """compare's "Timing warnings: [1] a (host), b (host); [2] none." (text and Markdown)."""
    match = re.match(r"^(\s*Timing warnings: )(.*?)(\.?)$", line)
    if not match:
        return line
    parts = []
    for part in match.group(2).split("; "):
        head = re.match(r"^(\[\d+\] )(.*)$", part)
        parts.append(head.group(1) + drop_timed_items(head.group(2)) if head else part)
    return match.group(1) + "; ".join(parts) + match.group(3)


def mask_json_warning_arrays(lines):
    """Removes host timing warnings from pretty-printed "warnings": [ {...}, ... ] arrays."""
    out, i = [], 0
    while i < len(lines):
        start = re.match(r'^(\s*)"warnings": \[$', lines[i])
        if not start:
            out.append(lines[i])
            i += 1
            continue
        indent = start.group(1)
        end = i + 1
        while end < len(lines) and not re.match("^" + indent + r"\](,?)$", lines[end]):
            end += 1
        if end == len(lines):  # not the shape expected: leave it
            out.append(lines[i])
            i += 1
            continue
        elements, current = [], []
        for line in lines[i + 1:end]:
            current.append(line)
            if re.match("^" + indent + r"  \},?$", line):
                elements.append(current)
                current = []
        if current:  # items that are not objects: leave the array as it is
            out.extend(lines[i:end + 1])
            i = end + 1
            continue
        kept = [e for e in elements
                if not (any('"clock": "host"' in l for l in e)
                        and any(re.search(r'"code": "(%s)"' % "|".join(TIMED_HOST_WARNINGS), l) for l in e))]
        closing = re.match("^" + indent + r"\](,?)$", lines[end]).group(1)
        if not kept:
            out.append(indent + '"warnings": []' + closing)
        else:
            out.append(lines[i])
            for k, element in enumerate(kept):
                element = list(element)
                element[-1] = indent + "  }" + ("," if k < len(kept) - 1 else "")
                out.extend(element)
            out.append(lines[end])
        i = end + 1
    return out


def mask_json_lines(lines):
    out = []
    spread_indent = None   # inside "host_seconds": { ... } (a timing spread)
    row_indent = None      # inside a compare row object
    row_kind = None        # "host" (host.* row) or "warnings"
    row_buffer = []
    for line in lines:
        if spread_indent is not None:
            if re.match("^" + spread_indent + r"\},?$", line):
                spread_indent = None
            elif not re.match(r'^\s*"count": ', line):
                line = re.sub(r'^(\s*"\w+": )-?[0-9][0-9.eE+-]*(,?)$', r"\g<1>" + '"' + MASK + r'"\2', line)
            out.append(line)
            continue
        m = re.match(r'^(\s*)"host_seconds": \{$', line)
        if m:
            spread_indent = m.group(1)
            out.append(line)
            continue
        line = re.sub(r'^(\s*"(?:host_seconds|warm_forward_host_seconds_median)": )-?[0-9][0-9.eE+-]*(,?)$',
                      r"\g<1>" + '"' + MASK + r'"\2', line)
        out.append(line)
    # compare rows: { "name": "host.median", ..., "same": x, "values": [..], "ratios": [..] }
    result, i = [], 0
    while i < len(out):
        line = out[i]
        m = re.match(r'^(\s*)"name": "(host\.[a-z]+|warnings)",$', line)
        if m and i > 0 and re.match(r"^\s*\{$", result[-1]) and '"label": ' in out[i + 1]:
            kind = "host" if m.group(2).startswith("host.") else "warnings"
            indent = m.group(1)[:-2]
            j = i
            while j < len(out) and not re.match("^" + indent + r"\},?$", out[j]):
                row = out[j]
                row = re.sub(r'^(\s*"same": )(true|false)(,?)$', r'\1"<host-dependent>"\3', row)
                if kind == "host":
                    row = re.sub(r"^(\s*)-?[0-9][0-9.eE+-]*(,?)$", r'\1"' + MASK + r'"\2', row)
                else:
                    row = re.sub(r'^(\s*)"(.*)"(,?)$', lambda s: s.group(1) + '"' + drop_timed_items(s.group(2))
                                 + '"' + s.group(3), row) if not re.match(r'^\s*"\w+": ', row) else row
                result.append(row)
                j += 1
            i = j
            continue
        result.append(line)
        i += 1
    return mask_json_warning_arrays(result)


PHASE_ROW = re.compile(r"^((?:model_load|inputs|cold_forward|warmup|warm_forward)\s+\S+\s+\d+\s+)(\S+)(\s)")
TEXT_WARNING = re.compile(r"^  warning \((%s)\): the [^:]* host time " % "|".join(TIMED_HOST_WARNINGS))


def mask_text_lines(lines):
    out = []
    section = None  # "runner", "sweep", "compare-times"
    for line in lines:
        if section == "compare-times" and re.match(r"^(Notes$|\*\*Notes\*\*$|--- )", line):
            section = None
        if re.match(r"^device\s+status\s+exit\s+GPU\s+warm fwd host ms", line):
            section = "runner"
        elif re.match(r"^\s+\S+  outcome\s+peak reserved\s+predicted\s+warm fwd ms  order$", line):
            section = "sweep"
        elif re.match(r"^(Warm forward times|\*\*Warm forward times)", line):
            section = "compare-times"
        elif section in ("runner", "sweep") and line.strip() == "":
            section = None
        elif section == "runner" and re.match(r"^cuda:\d+ ", line):
            line = line[:48] + digits_to_hash(line[48:64]) + line[64:]
        elif section == "sweep":
            line = line[:83] + digits_to_hash(line[83:94]) + line[94:]
        elif section == "compare-times":
            if re.match(r"^(\|\s*|\s*)(≠\s+)?host (median|IQR|CV)\b", line):
                kind = re.search(r"host (median|IQR|CV)", line).group(1)
                line = ("| host %s | %s |" % (kind, MASK)) if line.startswith("|") else "  host %s %s" % (kind, MASK)
            elif re.match(r"^(\|\s*|\s*)(≠\s+)?timing warnings\b", line):
                line = re.sub(r"≠\s+", "", line)
            if not line.startswith("|"):
                line = re.sub(r"(?<=\S)\s{2,}", " ", line)
        m = PHASE_ROW.match(line)
        if m and re.match(r"^(\d+\.\d+|-)$", m.group(2)):
            line = m.group(1) + digits_to_hash(m.group(2)) + line[m.end(2):]
        if re.match(r"^  host\s+-?\d", line):
            line = "  host " + MASK
        if TEXT_WARNING.match(line) or line == "  no warnings":
            continue
        line = mask_warning_summary(line)
        out.append(line)
    return out


def mask_csv_line(line):
    """compare --format csv: section,name,label,unit,same,value1,value2,...,ratio..."""
    if not line.startswith("times,"):
        return line
    fields = next(csv.reader([line]))
    if len(fields) < 5 or fields[4] not in ("true", "false"):
        return line
    if fields[1].startswith("host."):
        return ",".join(fields[:4] + ["<host-dependent>", MASK])
    if fields[1] == "warnings":
        fields[4] = "<host-dependent>"
        fields[5:] = [drop_timed_items(f) if f else f for f in fields[5:]]
        out = io.StringIO()
        csv.writer(out, lineterminator="").writerow(fields)
        return out.getvalue()
    return line


def mask_common(text, substitutions):
    for value, mask in substitutions:
        text = text.replace(value, mask)
    text = re.sub(r"\b(g\+\+|clang) [^,\"\n]*, [A-Za-z]*, LibTorch backend plugin",
                  "<COMPILER>, <BUILD-TYPE>, LibTorch backend plugin", text)
    text = re.sub(r"(LibTorch backend plugin built) against LibTorch [^,\"\n()]*\([^()\"\n]*\)",
                  r"\1", text)
    return text


def mask_file(path, paths, identity, arch):
    with open(path, encoding="utf-8", errors="surrogateescape") as f:
        text = original = f.read()
    if FIXED_DATA.search(os.path.basename(path)):
        for value, mask in paths:
            text = text.replace(value, mask)
    else:
        text = mask_common(text, paths + identity)
        if arch:
            text = re.sub(r"(?<![\w-])" + re.escape(arch) + r"(?![\w-])", "<ARCH>", text)
        text = mask_times(text)
    if text != original:
        with open(path, "w", encoding="utf-8", errors="surrogateescape") as f:
            f.write(text)


def mask_times(text):
    text = re.sub(r"warm host median ×[0-9.]+( \(within the repeats' IQR\))?", "warm host median ×" + MASK, text)
    lines = text.split("\n")
    lines = mask_json_lines(lines)
    lines = mask_text_lines(lines)
    lines = [mask_csv_line(line) for line in lines]
    return "\n".join(lines)


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--build-dir", required=True)
    parser.add_argument("--bin-dir", required=True)
    parser.add_argument("--work-dir", required=True)
    parser.add_argument("out_dir")
    args = parser.parse_args()
    # Longest first: the bin folder is usually inside the build folder.
    paths = [(os.path.realpath(args.bin_dir), "<BIN>"), (os.path.realpath(args.build_dir), "<BUILD>"),
             (os.path.realpath(args.work_dir), "<WORK>")]
    paths.sort(key=lambda p: -len(p[0]))
    identity = host_identity()
    arch = identity.pop("<ARCH>", None)
    paths = [p for p in paths if p[0] != "/"]
    identity = sorted(((value, mask) for mask, value in identity.items()), key=lambda p: -len(p[0]))
    for name in sorted(os.listdir(args.out_dir)):
        mask_file(os.path.join(args.out_dir, name), paths, identity, arch)
    return 0


if __name__ == "__main__":
    sys.exit(main())
