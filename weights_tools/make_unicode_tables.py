#!/usr/bin/env python3
"""Make the Unicode property tables of gna.c's tokenizer and paste them into gna.c between the lines
`BEGIN UNICODE TABLES` and `END UNICODE TABLES`. Standard library only.

    python3 weights_tools/make_unicode_tables.py gna.c

The tables are sorted, non-overlapping ranges [first, last] of code points:
  unicode_letter        \\p{L}: general categories Lu Ll Lt Lm Lo (Python's unicodedata)
  unicode_number        \\p{N}: Nd Nl No; also Rust's char::is_numeric (the Digits pre-tokenizer)
  unicode_white_space   \\s of Oniguruma, which is the White_Space property (PropList.txt); also the
                        \\s of Rust's regex crate and char::is_whitespace
  unicode_punctuation   what the Punctuation pre-tokenizer of Hugging Face tokenizers calls
                        punctuation beyond ASCII: the Pc Pd Ps Pe Pi Pf Po tables of the Rust crate
                        unicode_categories 0.1.1 (src/tables.rs), which hold Unicode 8.0 data. They
                        are copied below rather than derived, because HF uses that old data: 104 code
                        points that are punctuation in Unicode 14 are not in it, and U+166D and U+111C9
                        (punctuation in 8.0, recategorised later) are.

\\p{L} and \\p{N} come from the Unicode version of the Python that runs this script (printed and written
into the tables' comment). Hugging Face tokenizers' regexes run on Oniguruma, whose tables follow a
newer Unicode (16.0 in the onig_sys bundled since 2025); the two agree on every code point assigned by
the older of the two versions. Run this with a Python whose unicodedata.unidata_version matches to
close the gap for newer code points.

Canonical normalization (the NFC normalizer), from the same unicodedata but cut back to Unicode 9.0,
the data of the crate unicode-normalization-alignments 0.1.12 that HF tokenizers runs (its tables.rs
has UNICODE_VERSION = (9, 0, 0)):
  unicode_combining_class   {first, last, ccc}: the ranges of non-zero Canonical_Combining_Class
  unicode_decomposition     {c, first, second}: the one-step canonical decomposition mapping of c
                            (second = 0 for a singleton), applied recursively at run time; Hangul
                            syllables are left to the algorithm
  unicode_composition       {first, second, composite}: the primary composites, sorted by pair: the
                            two-character canonical decompositions of characters that are not
                            Full_Composition_Exclusion, found as those c whose NFC is c itself
                            (composition exclusions, singletons and non-starter decompositions
                            all normalize away from themselves)
Code points assigned after Unicode 9.0 that would carry a non-zero class or a decomposition
(NEW_SINCE_UNICODE_9) are left out, as the crate's 9.0 tables have neither for them. That list is
for Unicode 14.0; with another Python the script stops until the list is redone.
It also writes test/fixtures/nfc_vectors.txt (second argument), cases for gna_test: per line the
UTF-8 hex of a text and of its NFC (unicodedata.normalize), space-separated.

Case mapping as Python's str.lower() and str.capitalize() do it (CPython Objects/unicodeobject.c do_lower,
do_capitalize, lower_ucs4, handle_capital_sigma), taken from the behaviour of the Python that runs this
script, whatever its Unicode version (written into the tables' comments):
  unicode_lower             {first, last, stride, to}: chr(c).lower() where it is one code point other than
                            c: each c = first + k * stride up to last maps to to + k * stride (stride 1, or 2
                            for the alternating upper/lower blocks); U+03A3 is there as U+03C3, the final
                            sigma rule is the C code's
  unicode_lower_special     {c, first, second, third}: chr(c).lower() where it is more than one code point
                            (third 0 when two): _PyUnicode_ToLowerFull's special casing (U+0130)
  unicode_title             as unicode_lower, for chr(c).capitalize(): the full titlecase mapping
                            (_PyUnicode_ToTitleFull) that capitalize() gives the first character since
                            Python 3.8 ("\u01c6".capitalize() == "\u01c5")
  unicode_title_special     as unicode_lower_special, for chr(c).capitalize() ("\u00df" -> "Ss")
  unicode_case_ignorable    [first, last]: _PyUnicode_IsCaseIgnorable, the c for which
                            ("A" + c + "\u03a3").lower() ends in final sigma U+03C2 while (c + "\u03a3").lower()
                            does not (handle_capital_sigma looks past c to the cased "A" only when c is
                            case-ignorable)
  unicode_cased             [first, last]: _PyUnicode_IsCased, the c for which (c + "a").title() keeps the "a"
                            (do_title lowers what follows a cased character); checked against the
                            c that are not case-ignorable, whose (c + "\u03a3").lower() ends in U+03C2
                            exactly when c is cased
"""
import bisect
import re
import sys
import unicodedata

# PropList.txt, White_Space (unchanged since Unicode 6.3, when U+180E left it)
WHITE_SPACE = [(0x0009, 0x000D), (0x0020, 0x0020), (0x0085, 0x0085), (0x00A0, 0x00A0), (0x1680, 0x1680),
               (0x2000, 0x200A), (0x2028, 0x2029), (0x202F, 0x202F), (0x205F, 0x205F), (0x3000, 0x3000)]

# unicode_categories 0.1.1 (crates.io; github.com/swgillespie/unicode-categories at 92bb246), the union of
# PUNCTUATION_CONNECTOR, _DASH, _OPEN, _CLOSE, _INITIAL_QUOTE, _FINAL_QUOTE and _OTHER.
CRATE_PUNCTUATION = """
0x0021-0x0023 0x0025-0x002A 0x002C-0x002F 0x003A-0x003B 0x003F-0x0040 0x005B-0x005D 0x005F
0x007B 0x007D 0x00A1 0x00A7 0x00AB 0x00B6-0x00B7 0x00BB 0x00BF 0x037E 0x0387 0x055A-0x055F
0x0589-0x058A 0x05BE 0x05C0 0x05C3 0x05C6 0x05F3-0x05F4 0x0609-0x060A 0x060C-0x060D 0x061B
0x061E-0x061F 0x066A-0x066D 0x06D4 0x0700-0x070D 0x07F7-0x07F9 0x0830-0x083E 0x085E
0x0964-0x0965 0x0970 0x0AF0 0x0DF4 0x0E4F 0x0E5A-0x0E5B 0x0F04-0x0F12 0x0F14 0x0F3A-0x0F3D
0x0F85 0x0FD0-0x0FD4 0x0FD9-0x0FDA 0x104A-0x104F 0x10FB 0x1360-0x1368 0x1400 0x166D-0x166E
0x169B-0x169C 0x16EB-0x16ED 0x1735-0x1736 0x17D4-0x17D6 0x17D8-0x17DA 0x1800-0x180A
0x1944-0x1945 0x1A1E-0x1A1F 0x1AA0-0x1AA6 0x1AA8-0x1AAD 0x1B5A-0x1B60 0x1BFC-0x1BFF
0x1C3B-0x1C3F 0x1C7E-0x1C7F 0x1CC0-0x1CC7 0x1CD3 0x2010-0x2027 0x2030-0x2043 0x2045-0x2051
0x2053-0x205E 0x207D-0x207E 0x208D-0x208E 0x2308-0x230B 0x2329-0x232A 0x2768-0x2775
0x27C5-0x27C6 0x27E6-0x27EF 0x2983-0x2998 0x29D8-0x29DB 0x29FC-0x29FD 0x2CF9-0x2CFC
0x2CFE-0x2CFF 0x2D70 0x2E00-0x2E2E 0x2E30-0x2E42 0x3001-0x3003 0x3008-0x3011 0x3014-0x301F
0x3030 0x303D 0x30A0 0x30FB 0xA4FE-0xA4FF 0xA60D-0xA60F 0xA673 0xA67E 0xA6F2-0xA6F7
0xA874-0xA877 0xA8CE-0xA8CF 0xA8F8-0xA8FA 0xA8FC 0xA92E-0xA92F 0xA95F 0xA9C1-0xA9CD
0xA9DE-0xA9DF 0xAA5C-0xAA5F 0xAADE-0xAADF 0xAAF0-0xAAF1 0xABEB 0xFD3E-0xFD3F 0xFE10-0xFE19
0xFE30-0xFE52 0xFE54-0xFE61 0xFE63 0xFE68 0xFE6A-0xFE6B 0xFF01-0xFF03 0xFF05-0xFF0A
0xFF0C-0xFF0F 0xFF1A-0xFF1B 0xFF1F-0xFF20 0xFF3B-0xFF3D 0xFF3F 0xFF5B 0xFF5D 0xFF5F-0xFF65
0x10100-0x10102 0x1039F 0x103D0 0x1056F 0x10857 0x1091F 0x1093F 0x10A50-0x10A58 0x10A7F
0x10AF0-0x10AF6 0x10B39-0x10B3F 0x10B99-0x10B9C 0x11047-0x1104D 0x110BB-0x110BC
0x110BE-0x110C1 0x11140-0x11143 0x11174-0x11175 0x111C5-0x111C9 0x111CD 0x111DB
0x111DD-0x111DF 0x11238-0x1123D 0x112A9 0x114C6 0x115C1-0x115D7 0x11641-0x11643
0x1173C-0x1173E 0x12470-0x12474 0x16A6E-0x16A6F 0x16AF5 0x16B37-0x16B3B 0x16B44 0x1BC9F
0x1DA87-0x1DA8B
"""


# The code points that Unicode 10.0 to 14.0 assigned with a non-zero Canonical_Combining_Class or a
# canonical decomposition (all that Python 3.11's unicodedata 14.0.0 gives them, less what was
# assigned in 9.0: General_Category Unassigned of the npm package @unicode/unicode-9.0.0 2.0.7).
# U+11938 is the only decomposition among them (U+11935 U+11930, Unicode 13.0).
NFC_DATA_VERSION = "14.0.0"
NEW_SINCE_UNICODE_9 = """
07FD 0898-089F 08CA-08D3 09FE 0C3C 0D3B-0D3C 0EBA 1715 1ABF-1ACE 1DF6-1DFA A82C 10D24-10D27
10EAB-10EAC 10F46-10F50 10F82-10F85 11070 1133B 1145E 11839-1183A 11938 1193D-1193E 11943 119E0
11A34 11A47 11A99 11D42 11D44-11D45 11D97 16FF0-16FF1 1E130-1E136 1E2AE 1E2EC-1E2EF
"""


def ranges_of(predicate):
    out = []
    for c in range(0x110000):
        if predicate(c):
            if out and out[-1][1] == c - 1:
                out[-1][1] = c
            else:
                out.append([c, c])
    return out


def parse_list(text):
    out = []
    for item in text.split():
        a, _, b = item.partition("-")
        out.append([int(a, 16), int(b or a, 16)])
    return out


def c_table(name, ranges, comment):
    """ranges [first, last] as a uint32_t [][2] table"""
    return c_rows(name, ranges, comment)


def c_rows(name, rows, comment, fmt="0x{:X}"):
    items = ["{" + ", ".join(fmt.format(v) for v in row) + "}" for row in rows]
    lines, line = [], "   "
    for item in items:
        if len(line) + len(item) + 2 > 104:
            lines.append(line.rstrip())
            line = "   "
        line += " " + item + ","
    lines.append(line.rstrip())
    return (f"/* {comment} */\nstatic const uint32_t {name}[][{len(rows[0])}] = {{\n" + "\n".join(lines) +
            f"\n}};\n")


def canonical_tables():
    """(combining class ranges, decompositions, compositions) as Unicode 9.0 has them"""
    if unicodedata.unidata_version != NFC_DATA_VERSION:
        sys.exit(f"unicodedata is Unicode {unicodedata.unidata_version}; NEW_SINCE_UNICODE_9 is for "
                 f"{NFC_DATA_VERSION}: redo it for this version first")
    new = set()
    for a, b in parse_list(NEW_SINCE_UNICODE_9):
        new.update(range(a, b + 1))

    def ccc(c):
        return 0 if c in new else unicodedata.combining(chr(c))

    def decomposition(c):
        d = unicodedata.decomposition(chr(c))
        if c in new or not d or d.startswith("<") or 0xAC00 <= c <= 0xD7A3:
            return None
        return [int(x, 16) for x in d.split()]

    classes = []
    for c in range(0x110000):
        k = ccc(c)
        if k == 0:
            continue
        if classes and classes[-1][1] == c - 1 and classes[-1][2] == k:
            classes[-1][1] = c
        else:
            classes.append([c, c, k])
    decompositions, compositions = [], []
    for c in range(0x110000):
        d = decomposition(c)
        if d is None:
            continue
        assert len(d) in (1, 2) and all(x not in new for x in d), hex(c)
        decompositions.append([c, d[0], d[1] if len(d) == 2 else 0])
        if len(d) == 2 and unicodedata.normalize("NFC", chr(c)) == chr(c):
            compositions.append([d[0], d[1], c])
    compositions.sort()
    return classes, decompositions, compositions, new


def case_rows(mapping):
    """{c: text} as rows {first, last, stride, to} for the one-code-point texts, greedily joining
    runs of stride 1 or 2 with one delta, and rows {c, first, second, third} for the longer ones"""
    singles = sorted((c, ord(m)) for c, m in mapping.items() if len(m) == 1)
    rows, i = [], 0
    while i < len(singles):
        first, to = singles[i]
        last, stride, i = first, 1, i + 1
        delta = to - first
        if i < len(singles) and singles[i][0] - first in (1, 2) and singles[i][1] - singles[i][0] == delta:
            stride = singles[i][0] - first
            while i < len(singles) and singles[i][0] == last + stride and singles[i][1] - singles[i][0] == delta:
                last, i = singles[i][0], i + 1
        rows.append([first, last, stride, to])
    specials = []
    for c, m in sorted(mapping.items()):
        if len(m) > 1:
            assert len(m) <= 3, hex(c)  # CPython's mapped[3]
            specials.append([c] + [ord(x) for x in m] + [0] * (3 - len(m)))
    return rows, specials


def case_tables():
    """(lower rows, lower specials, title rows, title specials, case-ignorable ranges, cased ranges) of
    this Python's str.lower(), str.capitalize() and final sigma rule, checked by running the tables as
    the C code does against every code point"""
    sigma, final_sigma = "\u03a3", "\u03c2"
    lower, title, ignorable, cased = {}, {}, set(), set()
    for c in range(0x110000):
        x = chr(c)
        if x.lower() != x:
            lower[c] = x.lower()
        if x.capitalize() != x:
            title[c] = x.capitalize()
        after_cased = ("A" + x + sigma).lower()[-1] == final_sigma
        alone = (x + sigma).lower()[-1] == final_sigma
        assert after_cased or not alone, hex(c)
        if after_cased and not alone:
            ignorable.add(c)
        titled = (x + "a").title()
        assert titled[:-1] == x.title() and titled[-1] in "aA", hex(c)
        if titled[-1] == "a":
            cased.add(c)
        assert c in ignorable or alone == (c in cased), hex(c)
    tables = case_rows(lower) + case_rows(title)

    def mapped(rows, specials, c):
        for row in specials:
            if row[0] == c:
                return "".join(chr(v) for v in row[1:] if v)
        i = bisect.bisect_right(rows, [c, 0x110000]) - 1
        if i >= 0 and rows[i][0] <= c <= rows[i][1] and (c - rows[i][0]) % rows[i][2] == 0:
            return chr(rows[i][3] + c - rows[i][0])
        return chr(c)

    for c in range(0x110000):
        assert mapped(tables[0], tables[1], c) == lower.get(c, chr(c)), hex(c)
        assert mapped(tables[2], tables[3], c) == title.get(c, chr(c)), hex(c)
    return tables + (ranges_of(lambda c: c in ignorable), ranges_of(lambda c: c in cased))


def nfc_vectors(classes, decompositions, new):
    """texts and their NFC: every code point that has a class or a decomposition, with and without a
    following combining mark, and mixed sequences; none touches a code point new since 9.0"""
    marks = [0x301, 0x323, 0x308, 0x327, 0x35C, 0x345, 0x5B0, 0x93C, 0x3099, 0x1D16E]
    cases = []
    for c, _, _ in decompositions:
        cases.append(chr(c))
        cases.append(chr(c) + chr(0x323) + chr(0x301))
    for a, b, _ in classes:
        for c in range(a, b + 1):
            cases.append("a" + chr(c) + chr(0x301))
    for c in list(range(0xAC00, 0xD7A4, 97)) + [0xAC00, 0xD7A3]:
        cases.append(chr(c))
        cases.append(unicodedata.normalize("NFD", chr(c)))
        cases.append(unicodedata.normalize("NFD", chr(c)) + chr(0x11A8))
    for base in "aeouAEOUsnc\u03b1\u03c9\u0438\u05d0\u0915\u304b\u1100":
        for m1 in marks:
            for m2 in marks:
                cases.append(base + chr(m1) + chr(m2))
                cases.append(base + chr(m1) + "b" + chr(m2))
    cases += ["\u1100\u1161\u11a7", "\uac00\u11a7", "\uac00\u11a8", "\u1100\u1100\u1161", "\u0b47\u0b3e",
              "\u0b47\u0301\u0b3e", "\u0301a", "\u0301\u0300a\u0301", "caf\u00e9 \u212b \u2126 \u0344"]
    out, seen = [], set()
    for text in cases:
        if text in seen or any(ord(ch) in new for ch in text):
            continue
        seen.add(text)
        out.append(f"{text.encode().hex()} {unicodedata.normalize('NFC', text).encode().hex()}\n")
    return out


def main():
    path = sys.argv[1] if len(sys.argv) > 1 else "gna.c"
    vectors_path = sys.argv[2] if len(sys.argv) > 2 else "test/fixtures/nfc_vectors.txt"
    version = unicodedata.unidata_version
    classes, decompositions, compositions, new = canonical_tables()
    letter = ranges_of(lambda c: unicodedata.category(chr(c)) in ("Lu", "Ll", "Lt", "Lm", "Lo"))
    number = ranges_of(lambda c: unicodedata.category(chr(c)) in ("Nd", "Nl", "No"))
    # White_Space must agree with the categories it is drawn from
    for a, b in WHITE_SPACE:
        for c in range(a, b + 1):
            assert unicodedata.category(chr(c)) in ("Zs", "Zl", "Zp", "Cc"), hex(c)
    punctuation = parse_list(CRATE_PUNCTUATION)
    python = sys.version.split()[0]
    lower_rows, lower_specials, title_rows, title_specials, ignorable, cased = case_tables()
    body = (f"/* Generated by weights_tools/make_unicode_tables.py from Unicode {version} (Python {sys.version.split()[0]}\n"
            f" * unicodedata) and unicode_categories 0.1.1; do not edit by hand, run the script. */\n" +
            c_table("unicode_letter", letter, f"\\p{{L}}: Lu Ll Lt Lm Lo, Unicode {version}") +
            c_table("unicode_number", number, f"\\p{{N}}: Nd Nl No, Unicode {version}") +
            c_table("unicode_white_space", WHITE_SPACE, "\\s: the White_Space property") +
            c_table("unicode_punctuation", punctuation,
                    "Pc Pd Ps Pe Pi Pf Po as the Rust crate unicode_categories 0.1.1 has them (Unicode 8.0)") +
            c_rows("unicode_combining_class", classes,
                   f"{{first, last, ccc}}: non-zero Canonical_Combining_Class, Unicode {version} cut back to 9.0") +
            c_rows("unicode_decomposition", decompositions,
                   f"{{c, first, second}}: one-step canonical decompositions (second 0: a singleton), Unicode {version} "
                   "cut back to 9.0, Hangul syllables left to the algorithm") +
            c_rows("unicode_composition", compositions,
                   f"{{first, second, composite}}: the primary composites, by pair, Unicode {version} cut back to 9.0") +
            c_rows("unicode_lower", lower_rows,
                   f"{{first, last, stride, to}}: str.lower() of first + k * stride (up to last) is to + k * stride; "
                   f"Python {python}, Unicode {version}") +
            c_rows("unicode_lower_special", lower_specials,
                   f"{{c, first, second, third}}: str.lower() of c where it is 2 or 3 code points (third 0: two); "
                   f"Python {python}, Unicode {version}") +
            c_rows("unicode_title", title_rows,
                   f"{{first, last, stride, to}}: str.capitalize() of first + k * stride (up to last), its titlecase, "
                   f"is to + k * stride; Python {python}, Unicode {version}") +
            c_rows("unicode_title_special", title_specials,
                   f"{{c, first, second, third}}: str.capitalize() of c where it is 2 or 3 code points (third 0: "
                   f"two); Python {python}, Unicode {version}") +
            c_table("unicode_case_ignorable", ignorable,
                    f"Case_Ignorable as CPython's handle_capital_sigma reads it, Python {python}, Unicode {version}") +
            c_table("unicode_cased", cased, f"Cased as CPython's handle_capital_sigma reads it, Python {python}, "
                    f"Unicode {version}"))
    with open(path, encoding="utf-8") as f:
        text = f.read()
    pattern = re.compile(r"(/\* BEGIN UNICODE TABLES[^\n]*\n).*?(/\* END UNICODE TABLES)", re.S)
    if not pattern.search(text):
        sys.exit(f"{path}: no BEGIN UNICODE TABLES / END UNICODE TABLES markers")
    text = pattern.sub(lambda m: m.group(1) + body + m.group(2), text, count=1)
    with open(path, "w", encoding="utf-8") as f:
        f.write(text)
    vectors = nfc_vectors(classes, decompositions, new)
    with open(vectors_path, "w", encoding="utf-8") as f:
        f.write(f"# NFC of Python {sys.version.split()[0]} unicodedata {version} (weights_tools/make_unicode_tables.py): "
                "UTF-8 hex of a text, of its NFC\n")
        f.writelines(vectors)
    print(f"{path}: Unicode {version}: {len(letter)} letter, {len(number)} number, {len(WHITE_SPACE)} white space, "
          f"{len(punctuation)} punctuation ranges; {len(classes)} combining class ranges, {len(decompositions)} "
          f"decompositions, {len(compositions)} compositions ({4 * (3 * len(classes) + 3 * len(decompositions) + 3 * len(compositions))} "
          f"bytes); case: {len(lower_rows)} lower rows + {len(lower_specials)} special, {len(title_rows)} title "
          f"rows + {len(title_specials)} special, {len(ignorable)} case-ignorable, {len(cased)} cased ranges\n"
          f"{vectors_path}: {len(vectors)} NFC cases")


if __name__ == "__main__":
    main()
