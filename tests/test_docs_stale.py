#!/usr/bin/env python3
"""No page says a shipped feature is not there yet (issue 35: the README once said the node was
"not written yet" a release after it shipped).

    tests/test_docs_stale.py OSN SOURCE_DIR

The pages: README.md, docs/**/*.md, examples/**/README.md, studies/**/README.md. Three rules,
each failure printed as FAIL PAGE:LINE with the sentence:

- words that only ever mean "missing" in a user's manual: "not written yet", "is not written",
  "will be written", "not implemented yet", "coming soon", "TODO", "TBD", "FIXME", "later, a
  real ...";
- a clause (a sentence's part between ;, :, parentheses) that names a command the binary ships
  (`osn CMD` for each CMD that `osn --help` lists, so a command that ships later is covered the
  day it ships) together with a not-yet phrase ("not yet", "not written", "planned", "until
  then", "will come", ...);
- an item of a "Not done" / "Not yet done" list that names such a command.
"""
import os
import re
import subprocess
import sys

osn, src = os.path.abspath(sys.argv[1]), os.path.abspath(sys.argv[2])

ALWAYS = re.compile(r"not written yet|is not written|will be written|not implemented yet|"
                    r"coming soon|\bTODO\b|\bTBD\b|\bFIXME\b|later, a real", re.I)
# "not yet" alone is too wide ("the 503s have not yet reached the caller").
NOT_YET = re.compile(r"\b(is|are) not (yet )?(written|implemented|available|there|done|shipped)|"
                     r"not (yet )?(written|implemented|shipped|done) yet|not yet (written|"
                     r"implemented|available|done|shipped|supported)|\bplanned\b|until then|"
                     r"\bwill (come|be added|exist|ship|run|read|be)\b|does not exist yet", re.I)
NOT_DONE_HEAD = re.compile(r"^(\*\*)?not (yet )?done( yet)?\b", re.I)


def shipped():
    """The commands `osn --help` lists (two-space indent, a name, then its summary)."""
    out = subprocess.run([osn, "--help"], capture_output=True, text=True).stdout
    cmds = re.findall(r"^  ([a-z]+)\s{2,}\S", out, re.M)
    if len(cmds) < 4:
        sys.exit(f"FAIL: `osn --help` lists {cmds}: cannot tell what ships")
    return cmds


def pages():
    names = ["README.md"]
    for top in ("docs", "examples", "studies"):
        for d, _, files in os.walk(os.path.join(src, top)):
            for f in files:
                if f.endswith(".md") and (top == "docs" or f == "README.md"):
                    names.append(os.path.relpath(os.path.join(d, f), src))
    return sorted(names)


def sentences(lines):
    """(first line number, text) of each sentence, outside code fences and indented code; a
    list item or a heading is a paragraph of its own."""
    para, start, fenced = [], 0, False

    def flush():
        text = " ".join(para)
        # Ends of sentences: a full stop, a question or exclamation mark, or a colon, then a
        # space; never inside `code`.
        parts = re.split(r"(?<=[.!?:])\s+(?=[A-Z*`(\[])", text)
        return [(start, p) for p in parts if p.strip()]

    out = []
    for n, line in enumerate(lines, 1):
        if line.startswith("```"):
            fenced = not fenced
            continue
        code = line.startswith("    ") and not line.lstrip().startswith(("-", "*", "|"))
        new_item = re.match(r"^\s*([-*] |\d+\. |#+ |\|)", line) is not None
        if fenced or code or not line.strip() or new_item:
            if para:
                out += flush()
            para = []
            if fenced or code or not line.strip():
                continue
        if not para:
            start = n
        para.append(line.strip())
    if para:
        out += flush()
    return out


def scan(lines, cmds):
    """(line, what) for each stale place of a page, given the commands that ship."""
    names = [r"`osn (%s)\b" % "|".join(cmds)]
    if "node" in cmds:  # the node in prose, as the README once spoke of it
        names.append(r"\b(a|the) real (UDP )?node\b")
    names = re.compile("|".join(names), re.I)
    found = []
    for n, text in enumerate(lines, 1):
        if ALWAYS.search(text):
            found.append((n, f"a stale phrase: {text.strip()[:120]}"))
    for n, s in sentences(lines):
        # The command and the phrase in one clause: "`osn sim` beside it (`osn testbed` is
        # planned)" speaks of testbed only.
        if any(names.search(c) and NOT_YET.search(c) for c in re.split(r"[;:()]", s)):
            found.append((n, f"a shipped feature said not to be there: {s[:160]}"))
    # Items of a "Not done" list: from such a line to the first line that is not an item.
    in_list = False
    for n, text in enumerate(lines, 1):
        t = text.strip()
        if NOT_DONE_HEAD.match(t):
            in_list = True
        elif not (in_list and (t.startswith(("- ", "* ")) or not t)):
            in_list = False
            continue
        m = names.search(t)
        if m:
            found.append((n, f"{m.group(0)} ships, but is listed as not done: {t[:120]}"))
    return found


def self_test(cmds):
    """The rules on tests/data/stale_docs.md: every paragraph under "## Stale" caught (a "Not
    yet done" list counts as one), nothing under "## Fine"."""
    path = os.path.join(src, "tests", "data", "stale_docs.md")
    lines = open(path, encoding="utf-8").read().split("\n")
    stale, fine = lines.index("## Stale") + 1, lines.index("## Fine") + 1
    paras, cur = [], None
    for n in range(stale + 1, fine):
        if lines[n - 1].strip() and not lines[n - 1].startswith("- "):
            if cur is None:
                cur = n
        elif not lines[n - 1].strip() and cur is not None and not (
                n < len(lines) and lines[n].startswith("- ")):
            paras.append((cur, n))
            cur = None
    caught = sorted({n for n, _ in scan(lines, cmds + ["testbed"])})
    ok = True
    for a, b in paras:
        if not any(a <= n < b for n in caught):
            ok = False
            print(f"FAIL self-test: {path}:{a}: a stale paragraph not caught")
    for n in caught:
        if n >= fine:
            ok = False
            print(f"FAIL self-test: {path}:{n}: a fine sentence caught")
    print(f"self-test: {len(paras)} stale paragraphs, lines caught {caught}")
    return ok


def main():
    cmds = shipped()
    failures = 0 if self_test(cmds) else 1
    names = pages()
    for page in names:
        lines = open(os.path.join(src, page), encoding="utf-8").read().split("\n")
        for n, what in scan(lines, cmds):
            failures += 1
            print(f"FAIL {page}:{n}: {what}")
    print(f"{len(names)} pages, commands shipped: {', '.join(cmds)}; {failures} failures")
    sys.exit(1 if failures else 0)


main()
