"""Recursive-descent parser for modal formulas and sequents.

Both notations are accepted and may be mixed freely:

    Unicode: □  ◇ (or ◊)  ¬  ∨  ∧  →  ⊢
    ASCII:   [] <>        ~  |  &  -> |-

Grammar (lowest to highest precedence; → is right-associative, ∧ and ∨ left-associative and
never mixed without parentheses):

    sequent     := [formula ("," formula)*] TURNSTILE formula
    formula     := junction ["→" formula]
    junction    := unary (("∧" unary)* | ("∨" unary)*)
    unary       := ("¬" | "□" | "◇") unary | ATOM | "(" formula ")"
"""
from __future__ import annotations

from dataclasses import dataclass

from .formula import And, Atom, Box, Dia, Formula, Implies, Not, Or, to_ascii, to_unicode

__all__ = ["MAX_DEPTH", "ParseError", "Sequent", "parse_formula", "parse_sequent"]

# How deeply a formula may nest (connectives and parentheses, a chain p ∨ q ∨ … counting one level per
# connective). Real argument forms nest a handful of levels; the limit keeps every recursive walk over
# a formula (printing, hashing, normal forms, the checker) far from Python's recursion limit, so a
# deeper one is a ParseError naming its column, never a RecursionError (issue 26 item 10).
MAX_DEPTH = 100


class ParseError(ValueError):
    """A syntax error; `position` is the 0-based character index in `text`."""

    def __init__(self, reason: str, text: str, position: int) -> None:
        self.reason = reason
        self.text = text
        self.position = position
        shown = "".join(" " if ch.isspace() else ch for ch in text)
        message = f"{reason} at column {position + 1}\n  {shown}\n  {' ' * position}^"
        super().__init__(message)


@dataclass(frozen=True)
class Sequent:
    """An argument: premises ⊢ conclusion (no premises is allowed)."""

    premises: tuple[Formula, ...]
    conclusion: Formula

    def __post_init__(self) -> None:
        object.__setattr__(self, "premises", tuple(self.premises))

    def to_unicode(self) -> str:
        return _join(self, to_unicode, "⊢")

    def to_ascii(self) -> str:
        return _join(self, to_ascii, "|-")

    def __str__(self) -> str:
        return self.to_unicode()


def _join(sequent: Sequent, render, turnstile: str) -> str:
    conclusion = render(sequent.conclusion)
    if not sequent.premises:
        return f"{turnstile} {conclusion}"
    return f"{', '.join(render(p) for p in sequent.premises)} {turnstile} {conclusion}"


# --------------------------------------------------------------------------- tokens

ATOM, NOT, BOX, DIA, AND, OR, IMP, LPAREN, RPAREN, COMMA, TURNSTILE, END = (
    "atom", "¬", "□", "◇", "∧", "∨", "→", "(", ")", ",", "⊢", "end of input",
)

# longest spellings first so that "|-" wins over "|"
_SPELLINGS: tuple[tuple[str, str], ...] = (
    ("|-", TURNSTILE),
    ("->", IMP),
    ("[]", BOX),
    ("<>", DIA),
    ("¬", NOT),
    ("~", NOT),
    ("□", BOX),
    ("◇", DIA),
    ("◊", DIA),
    ("∧", AND),
    ("&", AND),
    ("∨", OR),
    ("|", OR),
    ("→", IMP),
    ("(", LPAREN),
    (")", RPAREN),
    (",", COMMA),
    ("⊢", TURNSTILE),
)

_HINTS = {
    "-": " (did you mean '->'?)",
    "<": " (did you mean '<>'?)",
    ">": " (did you mean '->'?)",
    "[": " (did you mean '[]'?)",
    "]": " (did you mean '[]'?)",
    "!": " (negation is written '~' or '¬')",
}


@dataclass(frozen=True)
class _Token:
    kind: str
    text: str
    position: int


def _tokenize(text: str) -> tuple[_Token, ...]:
    tokens: list[_Token] = []
    i, n = 0, len(text)
    while i < n:
        ch = text[i]
        if ch.isspace():
            i += 1
            continue
        if "a" <= ch <= "z":
            j = i + 1
            while j < n and (text[j].isascii() and (text[j].isalnum() or text[j] == "_")):
                j += 1
            tokens.append(_Token(ATOM, text[i:j], i))
            i = j
            continue
        for spelling, kind in _SPELLINGS:
            if text.startswith(spelling, i):
                tokens.append(_Token(kind, spelling, i))
                i += len(spelling)
                break
        else:
            if "A" <= ch <= "Z":
                hint = " (atom names start with a lowercase letter)"
            else:
                hint = _HINTS.get(ch, "")
            raise ParseError(f"unexpected character {ch!r}{hint}", text, i)
    tokens.append(_Token(END, "", n))
    return tuple(tokens)


# --------------------------------------------------------------------------- parser


class _Parser:
    def __init__(self, text: str) -> None:
        self.text = text
        self.tokens = _tokenize(text)
        self.index = 0
        self.nesting = 0  # how many formula / unary calls are open (the recursion's depth)
        self.depths: dict[int, int] = {}  # id(formula) -> its depth, for the formulas this parse built

    def depth(self, f: Formula) -> int:
        return self.depths.get(id(f), 0)  # an atom: 0

    def built(self, f: Formula, token: _Token, *parts: Formula) -> Formula:
        """Record the depth of a formula just built from `parts` at `token`; too deep is a ParseError."""
        depth = 1 + max(self.depth(p) for p in parts)
        if depth > MAX_DEPTH:
            raise self.fail(f"the formula nests more than {MAX_DEPTH} levels deep", token)
        self.depths[id(f)] = depth
        return f

    def enter(self, token: _Token) -> None:
        self.nesting += 1
        if self.nesting > MAX_DEPTH + 1:  # the outermost formula call is level 0
            raise self.fail(f"the formula nests more than {MAX_DEPTH} levels deep", token)

    @property
    def current(self) -> _Token:
        return self.tokens[self.index]

    def advance(self) -> _Token:
        token = self.tokens[self.index]
        self.index += 1
        return token

    def fail(self, reason: str, token: _Token | None = None) -> ParseError:
        token = token or self.current
        return ParseError(reason, self.text, token.position)

    def describe(self, token: _Token) -> str:
        return "end of input" if token.kind == END else repr(token.text)

    # formula := junction ["→" formula]
    def formula(self, after: _Token | None = None) -> Formula:
        self.enter(after or self.current)
        left = self.junction(after)
        if self.current.kind == IMP:
            arrow = self.advance()
            right = self.formula(arrow)
            left = self.built(Implies(left, right), arrow, left, right)
        self.nesting -= 1
        return left

    # junction := unary (("∧" unary)* | ("∨" unary)*)
    def junction(self, after: _Token | None) -> Formula:
        result = self.unary(after)
        first_op: _Token | None = None
        while self.current.kind in (AND, OR):
            op = self.current
            if first_op is not None and op.kind != first_op.kind:
                raise self.fail(
                    f"ambiguous mix of '{first_op.kind}' and '{op.kind}'; add parentheses"
                )
            first_op = first_op or op
            self.advance()
            right = self.unary(op)
            joined = And(result, right) if op.kind == AND else Or(result, right)
            result = self.built(joined, op, result, right)
        return result

    # unary := ("¬" | "□" | "◇") unary | ATOM | "(" formula ")"
    def unary(self, after: _Token | None) -> Formula:
        token = self.current
        if token.kind in (NOT, BOX, DIA):
            self.enter(token)
            self.advance()
            sub = self.unary(token)
            self.nesting -= 1
            return self.built({NOT: Not, BOX: Box, DIA: Dia}[token.kind](sub), token, sub)
        if token.kind == ATOM:
            self.advance()
            return Atom(token.text)
        if token.kind == LPAREN:
            self.advance()
            inner = self.formula(token)
            if self.current.kind != RPAREN:
                if self.current.kind == END:
                    raise self.fail("unclosed '(' (missing ')' before end of input)", token)
                raise self.fail(
                    f"expected ')' to close the '(' at column {token.position + 1} "
                    f"but found {self.describe(self.current)}"
                )
            self.advance()
            return inner
        if after is None:
            raise self.fail(f"expected a formula but found {self.describe(token)}")
        raise self.fail(
            f"expected a formula after '{after.text}' but found {self.describe(token)}"
        )

    def expect_end(self, what: str) -> None:
        token = self.current
        if token.kind == END:
            return
        if token.kind == RPAREN:
            raise self.fail("unexpected ')' (no matching '(')")
        if token.kind == TURNSTILE:
            raise self.fail(f"unexpected turnstile {token.text!r} {what}")
        if token.kind == COMMA:
            raise self.fail(f"unexpected ',' {what}")
        raise self.fail(f"unexpected {self.describe(token)}: expected a connective or end of input")


def parse_formula(text: str) -> Formula:
    """Parse one formula; raise ParseError (a ValueError) with the position of the problem."""
    if not isinstance(text, str):
        raise TypeError(f"parse_formula expects a string, got {type(text).__name__}")
    parser = _Parser(text)
    if parser.current.kind == END:
        raise ParseError("empty input: expected a formula", text, len(text))
    result = parser.formula()
    parser.expect_end("in a formula (use parse_sequent for arguments)")
    return result


def parse_sequent(text: str) -> Sequent:
    """Parse "φ1, φ2, … ⊢ ψ" (or with |-); the premise list may be empty."""
    if not isinstance(text, str):
        raise TypeError(f"parse_sequent expects a string, got {type(text).__name__}")
    parser = _Parser(text)
    turnstiles = [t for t in parser.tokens if t.kind == TURNSTILE]
    if parser.current.kind == END:
        raise ParseError("empty input: expected a sequent such as 'p, q ⊢ r'", text, len(text))
    if not turnstiles:
        raise ParseError("missing turnstile '⊢' (or '|-') between premises and conclusion",
                         text, len(text))
    if len(turnstiles) > 1:
        raise ParseError("a sequent has exactly one turnstile; found a second one",
                         text, turnstiles[1].position)
    premises: list[Formula] = []
    if parser.current.kind != TURNSTILE:
        separator: _Token | None = None
        while True:
            premises.append(parser.formula(separator))
            if parser.current.kind == COMMA:
                separator = parser.advance()
                continue
            if parser.current.kind == TURNSTILE:
                break
            token = parser.current
            if token.kind == RPAREN:
                raise parser.fail("unexpected ')' (no matching '(')")
            raise parser.fail(
                f"unexpected {parser.describe(token)} after a premise: "
                "expected a connective, ',' or the turnstile"
            )
    turnstile = parser.advance()
    if parser.current.kind == END:
        raise parser.fail(f"expected a conclusion after '{turnstile.text}' but found end of input")
    conclusion = parser.formula(turnstile)
    parser.expect_end("after the conclusion")
    return Sequent(tuple(premises), conclusion)
