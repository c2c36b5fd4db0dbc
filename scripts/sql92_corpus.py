"""Deterministic corpus of SQL92 filter expressions for differential testing of `subguard`'s validator.

    python scripts/sql92_corpus.py [--seed 24] [--count 9000] > expressions.jsonl

Prints one JSON string per line: grammar-based random expressions of RocketMQ's selector language,
then mutations of them (token drops, duplications, swaps, insertions, dangling NOT/AND/OR), non-ASCII
and Unicode case-folding letters inside keywords and identifiers, deep nesting (parentheses, NOT,
unary minus and plus, up to 1,500 levels), long/int/double boundary numbers, BETWEEN with mixed
bounds, IN lists, IS NULL chains, comments, string escapes, whitespace and empty input. The same seed
always prints the same lines. The expressions were run through the broker's own parser to produce
`tests/rocketmq/data/sql92_broker_verdicts.jsonl`.
"""

from __future__ import annotations

import argparse
import json
import random
import sys

KEYWORDS = ["NOT", "AND", "OR", "BETWEEN", "IN", "TRUE", "FALSE", "NULL", "IS", "CONTAINS", "STARTSWITH", "ENDSWITH"]
IDS = [
    "a",
    "b",
    "c",
    "region",
    "price",
    "amount",
    "TAGS",
    "_x",
    "$y",
    "k9",
    "color",
    "Is",
    "nota",
    "orx",
    "INx",
    "isnull",
    "between1",
    "s",
    "K",
    "i",
    "id_1",
    "$",
    "_",
    "notnull",
    "TRUEx",
]
STRINGS = [
    "'x'",
    "'eu'",
    "''",
    "'it''s'",
    "'a b'",
    "'ıİſK'",
    "'日本'",
    "'--'",
    "'/*'",
    "'\\'",
    "'''x'''",
    "'é'",
    "'1'",
    "'\t'",
    "'a\nb'",
    "'😀'",
    "'TRUE'",
    "'null'",
    "'3.5'",
]
INTS = [
    "0",
    "1",
    "7",
    "10",
    "42",
    "100",
    "2147483647",
    "2147483648",
    "-1",
    "9223372036854775807",
    "9223372036854775808",
    "9223372036854775807L",
    "10L",
    "3l",
    "0L",
    "007",
    "00",
    "12345678901234567890",
]
FLOATS = [
    "1.5",
    "0.0",
    "0.",
    ".5",
    "5.",
    "1e5",
    "1E5",
    "1e+5",
    "1e-5",
    "2.5E-3",
    "4.9e-324",
    "2.5e-324",
    "1e-400",
    "1.7976931348623157e308",
    "1.8e308",
    "9007199254740992.0",
    "9007199254740993.0",
    "3.",
    ".0",
    "1e",
    "1.e3",
    ".e3",
]
# letters that Unicode case folding relates to ASCII (re.IGNORECASE matches them, JavaCC does not)
FOLDING = [
    "ı",
    "İ",
    "ſ",
    "\u212a",
    "\u212b",
    "ß",
    "ﬀ",
    "ﬁ",
    "ﬅ",
    "é",
    "Ι",
    "ι",
    "ς",
    "σ",
    "а",
    "е",
    "о",
    "Ａ",
    "ｉ",
    "ǅ",
    "ẞ",
    "µ",
    "ÿ",
]
NON_ASCII = [
    *FOLDING,
    "\u00a0",
    "\u2003",
    "\u3000",
    "\u200b",
    "\ufeff",
    "😀",
    "\u0085",
    "\u2028",
    "\x00",
    "\x7f",
    "¡",
    "→",
]
SPACES = [
    " ",
    " ",
    " ",
    "  ",
    "\t",
    "\n",
    "\r\n",
    "\r",
    "\f",
    " /* c */ ",
    "/**/",
    " -- line\n",
    "\n-- c\r",
    " /* ** / */ ",
]
JUNK = [
    "#",
    "!",
    "!=",
    "==",
    "*",
    "/",
    "%",
    "&&",
    "||",
    ";",
    "[",
    "]",
    "{",
    "}",
    "@",
    "?",
    ":",
    ".",
    "^",
    "~",
    "`",
    '"',
    "\\",
]


def case(rng: random.Random, word: str) -> str:
    roll = rng.random()
    if roll < 0.4:
        return word
    if roll < 0.7:
        return word.lower()
    return "".join(ch.upper() if rng.random() < 0.5 else ch.lower() for ch in word)


class Grammar:
    def __init__(self, rng: random.Random) -> None:
        self.rng = rng

    def sp(self) -> str:
        return self.rng.choice(SPACES) if self.rng.random() < 0.15 else " "

    def kw(self, word: str) -> str:
        return case(self.rng, word)

    def number(self) -> str:
        return self.rng.choice(INTS if self.rng.random() < 0.6 else FLOATS)

    def value(self, depth: int) -> str:
        r = self.rng.random()
        if r < 0.35:
            return self.rng.choice(IDS)
        if r < 0.6:
            return self.number()
        if r < 0.75:
            return self.rng.choice(STRINGS)
        if r < 0.82:
            return self.kw(self.rng.choice(["TRUE", "FALSE", "NULL"]))
        if r < 0.9 and depth < 4:
            return (
                "-" + self.sp().strip(" ") + self.value(depth + 1)
                if self.rng.random() < 0.7
                else "+" + self.value(depth + 1)
            )
        if depth < 4:
            return "(" + self.or_expr(depth + 1) + ")"
        return self.rng.choice(IDS)

    def operand(self, depth: int) -> str:
        """A property or number that the broker can compare with >, <, BETWEEN."""
        r = self.rng.random()
        if r < 0.6:
            return self.rng.choice(IDS)
        if r < 0.9:
            return self.rng.choice(
                [
                    "1",
                    "7",
                    "10",
                    "42",
                    "100",
                    "2147483647",
                    "2147483648",
                    "9223372036854775807",
                    "10L",
                    "1.5",
                    ".5",
                    "5.",
                    "1e5",
                    "2.5E-3",
                    "4.9e-324",
                    "1.7976931348623157e308",
                    "9007199254740993",
                ]
            )
        if r < 0.95:
            return "-" + self.operand(depth + 1) if depth < 8 else "-1"
        return "(" + self.rng.choice(IDS) + ")"

    def comparison(self, depth: int) -> str:
        if self.rng.random() < 0.06:
            return self.wild(depth)
        r = self.rng.random()
        sp, kw, rng = self.sp, self.kw, self.rng
        left = rng.choice(IDS)
        neg = kw("NOT") + sp() if rng.random() < 0.3 else ""
        if r < 0.2:
            op = rng.choice([">", ">=", "<", "<="])
            return self.operand(depth) + sp() + op + sp() + self.operand(depth)
        if r < 0.35:
            right = rng.choice([*STRINGS, *IDS, "1", "-1", "1.5", "TRUE", "FALSE", "10L"])
            return left + sp() + rng.choice(["=", "<>"]) + sp() + right
        if r < 0.45:
            lo, hi = sorted([rng.randint(-5, 100), rng.randint(-5, 100)])
            low, high = (str(lo), str(hi)) if rng.random() < 0.7 else (self.operand(depth), self.operand(depth))
            return self.operand(depth) + sp() + neg + kw("BETWEEN") + sp() + low + sp() + kw("AND") + sp() + high
        if r < 0.57:
            items = [rng.choice(STRINGS) for _ in range(rng.randint(1, 4))]
            return left + sp() + neg + kw("IN") + sp() + "(" + ("," + sp()).join(items) + ")"
        if r < 0.67:
            return left + sp() + kw("IS") + sp() + (kw("NOT") + sp() if rng.random() < 0.5 else "") + kw("NULL")
        if r < 0.75:
            word = rng.choice(["CONTAINS", "STARTSWITH", "ENDSWITH"])
            return left + sp() + neg + kw(word) + sp() + rng.choice(STRINGS)
        if r < 0.85 and depth < 6:
            return kw("NOT") + sp() + self.comparison(depth + 1)
        if r < 0.93 and depth < 4:
            return "(" + self.or_expr(depth + 1) + ")"
        return rng.choice([left, "TRUE", "FALSE", "NULL"]) if rng.random() < 0.8 else left

    def wild(self, depth: int) -> str:
        """Any operands: many of these fail the broker's compile-time checks."""
        r = self.rng.random()
        left = self.value(depth) if self.rng.random() < 0.5 else self.rng.choice(IDS)
        sp, kw = self.sp, self.kw
        neg = kw("NOT") + sp() if self.rng.random() < 0.3 else ""
        if r < 0.3:
            op = self.rng.choice(["=", "<>", ">", ">=", "<", "<="])
            return left + sp() + op + sp() + self.value(depth)
        if r < 0.5:
            return (
                left
                + sp()
                + neg
                + kw("BETWEEN")
                + sp()
                + self.value(depth)
                + sp()
                + kw("AND")
                + sp()
                + self.value(depth)
            )
        if r < 0.7:
            items = [
                self.rng.choice(STRINGS) if self.rng.random() < 0.7 else self.value(depth)
                for _ in range(self.rng.randint(1, 4))
            ]
            return left + sp() + neg + kw("IN") + sp() + "(" + ("," + sp()).join(items) + ")"
        if r < 0.85:
            word = self.rng.choice(["CONTAINS", "STARTSWITH", "ENDSWITH"])
            return left + sp() + neg + kw(word) + sp() + self.value(depth)
        return kw("NOT") + sp() + left

    def and_expr(self, depth: int) -> str:
        parts = [self.comparison(depth) for _ in range(self.rng.choice([1, 1, 1, 2, 2, 3]))]
        return (self.sp() + self.kw("AND") + self.sp()).join(parts)

    def or_expr(self, depth: int = 0) -> str:
        parts = [self.and_expr(depth) for _ in range(self.rng.choice([1, 1, 2, 2, 3]))]
        return (self.sp() + self.kw("OR") + self.sp()).join(parts)


def tokens(text: str) -> list[str]:
    """A rough split for mutations (strings kept whole)."""
    out: list[str] = []
    i = 0
    while i < len(text):
        ch = text[i]
        if ch.isspace():
            i += 1
            continue
        if ch == "'":
            j = text.find("'", i + 1)
            while j != -1 and text[j + 1 : j + 2] == "'":
                j = text.find("'", j + 2)
            j = len(text) if j == -1 else j + 1
        elif ch.isalnum() or ch in "_$.":
            j = i
            while j < len(text) and (text[j].isalnum() or text[j] in "_$."):
                j += 1
        elif text.startswith(("<>", ">=", "<="), i):
            j = i + 2
        else:
            j = i + 1
        out.append(text[i:j])
        i = j
    return out


def mutate(rng: random.Random, text: str) -> str:
    toks = tokens(text)
    if not toks:
        return text
    op = rng.randrange(9)
    i = rng.randrange(len(toks))
    if op == 0:
        del toks[i]
    elif op == 1:
        toks.insert(i, toks[i])
    elif op == 2 and len(toks) > 1:
        j = min(i + 1, len(toks) - 1)
        toks[i], toks[j] = toks[j], toks[i]
    elif op == 3:
        toks.insert(
            i, case(rng, rng.choice(["NOT", "AND", "OR", "IS", "NULL", "IN", "BETWEEN", "(", ")", ",", "-", "+"]))
        )
    elif op == 4:
        toks.append(
            case(
                rng,
                rng.choice(
                    ["NOT", "AND", "OR", "NOT NOT", "IS", "IS NOT", "NOT IN", "NOT b", "b", "= 1", "NOT BETWEEN"]
                ),
            )
        )
    elif op == 5:
        toks.insert(i, rng.choice(JUNK))
    elif op == 6:
        toks.insert(rng.randrange(len(toks) + 1), rng.choice(IDS))
    elif op == 7:
        toks.insert(i, rng.choice(NON_ASCII))
    else:
        toks = toks[: rng.randrange(len(toks) + 1)]
    return " ".join(toks)


def fold_letters(rng: random.Random, text: str) -> str:
    """Swap one ASCII letter for a non-ASCII letter that case-folds to (or looks like) it."""
    swaps = {
        "i": ["ı", "İ"],
        "I": ["ı", "İ"],
        "s": ["ſ"],
        "S": ["ſ"],
        "k": ["\u212a"],
        "K": ["\u212a"],
        "a": ["а", "Ａ", "\u212b"],
        "e": ["е", "é"],
        "o": ["о"],
        "N": ["Ν"],
        "T": ["Т"],
    }
    spots = [i for i, ch in enumerate(text) if ch in swaps]
    if not spots:
        return text + rng.choice(FOLDING)
    i = rng.choice(spots)
    return text[:i] + rng.choice(swaps[text[i]]) + text[i + 1 :]


def deep(rng: random.Random) -> str:
    n = rng.choice([10, 100, 169, 170, 171, 500, 999, 1000, 1001, 1200, 1500, rng.randint(2, 1500)])
    inner = rng.choice(
        ["a", "a = 1", "a IS NULL", "NOT a", "a BETWEEN 1 AND 2", "'x'", "1", "TRUE", "a NOT b", "a b", "a #"]
    )
    kind = rng.randrange(9)
    if kind == 0:
        core = "(" * n + inner + ")" * n
    elif kind == 1:
        core = "NOT " * n + inner
    elif kind == 2:
        core = "a > " + "-" * n + "1"
    elif kind == 3:
        core = "a > " + "- " * n + rng.choice(["1", "b", "(1)", "'x'"])
    elif kind == 4:
        core = "a > " + "+" * n + "1"
    elif kind == 5:
        half = n // 2
        core = "NOT (" * half + inner + ")" * half
    elif kind == 6:
        core = "(" * n + inner + ")" * (n - rng.randint(1, 3))
    elif kind == 7:
        core = "(" * n + inner + ")" * n + rng.choice([" AND b", " b", " NOT b", " OR (c)", ")", " #"])
    else:
        third = n // 3
        core = "- (" * third + "NOT " * third + "a" + ")" * third
    return core


def special() -> list[str]:
    out = [
        "",
        " ",
        "   ",
        "\t",
        "\n",
        "\r\n",
        "\f",
        " \t\n\r\f ",
        "/* only a comment */",
        "-- only a comment\n",
        "--",
        "/*",
        "/**/a",
        "a",
        "a NOT",
        "a NOT b",
        "a = 1 NOT b",
        "(a) NOT b",
        "a NOT NOT IN ('x')",
        "a IS NULL NOT b",
        "a ıS NULL",
        "a Iſ NULL",
        "region Iſ",
        "a İS NULL",
        "a IS NULL AND b ıS NULL",
        "a \u212a",
        "a BETWEEN 9007199254740993 AND 9007199254740992.0",
        "a BETWEEN 9007199254740992.0 AND 9007199254740993",
        "a BETWEEN 9007199254740993 AND 9007199254740992",
        "a BETWEEN 2147483648 AND 2147483647",
        "a BETWEEN 1 AND 0.5",
        "a BETWEEN 0.5 AND 1",
        "a BETWEEN 1.0 AND 1",
        "a BETWEEN 9223372036854775807 AND 9.223372036854775807E18",
        "a BETWEEN 9.223372036854775807E18 AND 9223372036854775807",
        "a NOT BETWEEN 2 AND 1",
        "a BETWEEN -1 AND -2",
        "a BETWEEN 'a' AND 'b'",
        "a BETWEEN NULL AND 1",
        "a BETWEEN TRUE AND 1",
        "a IS NULL IS NULL",
        "a IS NOT NULL IS NOT NULL",
        "a IS NULL = TRUE",
        "TRUE = a IS NULL",
        "a IS NULL IS b",
        "a IS NOT b",
        "a = 1 -- comment",
        "a = 1 -- comment\n",
        "a = 1 /* x",
        "a /* x */ = /* y */ 1",
        "a = 'x' -- c",
        "a = 'it''s'",
        "a = '''",
        "a = 'x''",
        "a IN ()",
        "a IN ('x',)",
        "a IN ('x' 'y')",
        "a IN 'x'",
        "a IN ('x', 1)",
        "a NOT IN ('x') AND b",
        "'x' IN ('x')",
        "(a) IN ('x')",
        "- a IN ('x')",
        "+a",
        "+ +a",
        "+(a)",
        "+(a NOT b)",
        "+(a = 1) b",
        "+'x' > 1",
        "-'x' > 1",
        "-TRUE > 1",
        "NOT -a",
        "-a AND b",
        "a > -1.5",
        "a > - 0.0",
        "a > -0",
        "a > 0",
        "a = 0.0",
        "a CONTAINS 'x' CONTAINS 'y'",
        "a CONTAINS b",
        "a NOT CONTAINS",
        "a NOT STARTSWITH 1",
        "a ENDSWITH",
        "TRUE = 1",
        "1 = TRUE",
        "TRUE = FALSE",
        "NULL = a",
        "a = NULL",
        "a <> NULL",
        "NULL IS NULL",
        "1 IS NULL",
        "'x' IS NULL AND a",
        "a AND",
        "a OR",
        "AND a",
        "OR",
        "NOT",
        "()",
        "(a",
        "a)",
        "a))",
        "((a)",
        "a = 1 AND (b = 2 OR c = 3)",
        "a=1ANDb=2",
        "a=1 AND b=2",
        "a=1and b=2",
        "a = 1e5",
        "a = 1e",
        "a = .e3",
        "a = 1.e3",
        "a = 0x10",
        "a = 0L",
        "a = 00",
        "a.b = 1",
        "a = 1 b # c",
        "a = 1 # c",
        "a = 1 😀",
        "'😀' = a b",
        "'😀😀' a",
        "a = '😀' b",
        "\ud83d = a",
        "a = '\ud800' b",
        "a\u00a0= 1",
        "a =\u3000 1",
        "\ufeffa = 1",
        "a IS NULL \u212a",
        "a NOT \u212a",
        "nOt a",
        "Not Not a",
        "a bEtWeEn 1 AnD 2",
        "a iS nOt NuLl",
        "a = 1\r\n\tb",
        "a = 1\tb",
        "a\t\t= 1 \t b",
        "a = 1\n\n  b",
        "a = 1\r\rb",
        "\n\n\ta b",
        "a\r\n-- c\r\n b",
    ]
    return out


def generate(seed: int, count: int) -> list[str]:
    rng = random.Random(seed)
    g = Grammar(rng)
    seen: set[str] = set()
    out: list[str] = []

    def add(text: str) -> None:
        if text not in seen:
            seen.add(text)
            out.append(text)

    for text in special():
        add(text)
    base = [g.or_expr() for _ in range(count // 3)]
    for text in base:
        add(text)
    while len(out) < count:
        r = rng.random()
        src = rng.choice(base)
        if r < 0.45:
            text = mutate(rng, src)
            if rng.random() < 0.3:
                text = mutate(rng, text)
        elif r < 0.6:
            text = fold_letters(rng, src)
        elif r < 0.62:
            text = deep(rng)
        elif r < 0.75:
            text = src + rng.choice(
                [
                    " NOT",
                    " NOT b",
                    " AND",
                    " OR",
                    " NOT NOT IN ('x')",
                    " IS NULL NOT b",
                    " b",
                    " " + rng.choice(NON_ASCII),
                ]
            )
        elif r < 0.82:
            lo, hi = rng.choice(INTS + FLOATS), rng.choice(INTS + FLOATS)
            text = f"{rng.choice(IDS)} {case(rng, rng.choice(['BETWEEN', 'NOT BETWEEN']))} {lo} {case(rng, 'AND')} {hi}"
        elif r < 0.87:
            text = (
                rng.choice(IDS)
                + " "
                + " ".join(
                    case(rng, rng.choice(["IS NULL", "IS NOT NULL", "= 1", "<> 'x'", "IS", "NOT"]))
                    for _ in range(rng.randint(1, 5))
                )
            )
        elif r < 0.92:
            text = "".join(
                rng.choice([*NON_ASCII, *JUNK, *SPACES, "a", "(", ")", "'", "-", "1", "NOT ", " AND ", "="])
                for _ in range(rng.randint(1, 12))
            )
        else:
            i = rng.randrange(len(src) + 1)
            text = src[:i] + rng.choice([*NON_ASCII, *SPACES, "'", "/*", "--", "\n"]) + src[i:]
        add(text)
    return out


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--seed", type=int, default=24)
    ap.add_argument("--count", type=int, default=9000)
    args = ap.parse_args()
    for text in generate(args.seed, args.count):
        sys.stdout.write(json.dumps(text) + "\n")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
