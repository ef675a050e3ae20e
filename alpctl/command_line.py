"""The command line of a call, read without argparse when it is a plain one.

Importing argparse (with the gettext and warnings modules it imports) and building a
command's parsers were half of what alp added to a raw client's call: 13.5 M of the 112 M
instructions of `alp thread list --json`, against 87 M for the raw client. Most command lines
are plain — `alp [GLOBAL…] COMMAND [ACTION]`
followed by the options and words the command declares, each spelled in full — and those are
read here from the same declarations argparse gets (a command's `configure`, or its
`ACTIONS`, records its `add_argument` calls on a `_Declarations`). Anything else goes to
argparse (`alpctl.parser`), which reads it or says what is wrong: `--help`, `--version`, an
abbreviated or unknown option, a value that is not of its type or choices, a missing or
extra word, a command with sub-actions or option groups, bare `alp`. So both readers give
the same `Arguments` for a plain line (tests/unit/test_command_line.py compares them on
generated lines of the whole grammar), and every error and help text is argparse's.
"""

from __future__ import annotations

from types import SimpleNamespace

from alpctl.commands import COMMANDS, load

# Annotations only: importing `typing` would cost every CLI call ~1.5 ms.
TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

    from alpctl.commands import Command


class Arguments(SimpleNamespace):
    """A parsed command line: what argparse fills (`parse_args(…, namespace=Arguments())`)
    and what `quick_parse` returns."""


#: the global options: (flags, help, takes a value)
GLOBAL_OPTIONS: tuple[tuple[str, str, bool], ...] = (
    ("--json", "machine output: one JSON document on stdout (stable field names)", False),
    ("--socket", "the daemon's socket (default: $ALP_SOCKET, else the runtime directory)", True),
    ("--home", "state home of a daemon alp starts for you (default: $ALP_HOME or ~/.alp)", True),
)

#: options of bare `alp` and the global ones that take a value (so their value is not
#: mistaken for a command word)
VALUED = frozenset(
    {
        "--title",
        "--runtime",
        "--agent",
        "--prompt",
        "--cwd",
        "--timeout",
        "--budget-usd",
        "--budget-tokens",
    }
    | {flags for flags, _help, valued in GLOBAL_OPTIONS if valued}
)


def runtime_options(parser: Any) -> None:
    """What starts a root: bare `alp` and `alp thread continue`."""
    parser.add_argument("--runtime", help="claude, codex or command (default: the agent's)")
    parser.add_argument(
        "--agent",
        help="an agent from config.toml (default: the thread's last root's, else the runtime's)",
    )
    parser.add_argument(
        "--headless", action="store_true", help="run under alpd with no terminal (needs --prompt)"
    )
    parser.add_argument("--prompt", help="the headless run's input")
    parser.add_argument(
        "--cwd",
        help="run this root in DIR (default: the thread's workspace); later runs stay there",
    )
    parser.add_argument(
        "--timeout", help="end the run past this time: 90s, 30m, 2h (default: the agent's)"
    )
    parser.add_argument(
        "--budget-usd",
        dest="budget_usd",
        type=float,
        help="end the run once it costs this much, in USD (default: the agent's)",
    )
    parser.add_argument(
        "--budget-tokens",
        dest="budget_tokens",
        type=int,
        help="end the run once it used this many tokens (default: the agent's)",
    )
    parser.add_argument(
        "--wait", action="store_true", help="with --headless: block until the run settles"
    )
    parser.add_argument(
        "-f",
        "--follow",
        action="store_true",
        help="with --headless: print the run's output as it comes, until it settles",
    )
    parser.add_argument(
        "--raw", action="store_true", help="with --follow: the runtime's own output (its JSONL)"
    )


def split_runtime_args(argv: list[str]) -> tuple[list[str], list[str] | None]:
    """Arguments before `--` are ours; after it they go to the runtime (or are pin text)."""
    if "--" in argv:
        index = argv.index("--")
        return argv[:index], argv[index + 1 :]
    return argv, None


def command_words(ours: list[str]) -> list[str]:
    """The words that are not options or options' values: the command, then its action."""
    words = []
    tokens = iter(ours)
    for token in tokens:
        if token.startswith("-"):
            if token in VALUED:
                next(tokens, None)
            continue
        words.append(token)
    return words


def parse(argv: list[str]) -> Arguments:
    """The call's arguments: read here when the line is plain, else by argparse."""
    quick = quick_parse(argv)
    if quick is not None:
        return quick
    from alpctl.parser import parse as parse_with_argparse

    return parse_with_argparse(argv)


class _Unplain(Exception):
    """The line (or the command's declarations) needs argparse."""


class _Option:
    """One declared option or positional word, as argparse would read it."""

    #: the keywords of `add_argument` read here; any other (`required`, `const`, …) leaves the
    #: command to argparse, and so do `nargs` on an option and an action but `store_true`
    KNOWN = frozenset({"action", "nargs", "type", "choices", "default", "dest", "help", "metavar"})

    def __init__(self, flags: tuple[str, ...], spec: dict[str, Any]) -> None:
        self.positional = not flags[0].startswith("-")
        self.switch = spec.get("action") == "store_true"
        self.nargs = spec.get("nargs")
        self.type = spec.get("type")
        self.choices = spec.get("choices")
        self.default = spec.get("default", False if self.switch else None)
        if (
            not spec.keys() <= self.KNOWN
            or spec.get("action", "store_true") != "store_true"
            or (self.nargs is not None and not self.positional)
            or (isinstance(self.default, str) and (self.type or self.choices))
        ):
            raise _Unplain(flags)
        if self.positional:
            self.dest = flags[0]
        else:
            long = [flag for flag in flags if flag.startswith("--")]
            self.dest = spec.get("dest") or (long or flags)[0].lstrip("-").replace("-", "_")

    def value(self, text: str) -> Any:
        """`text` converted and checked as argparse would, or `_Unplain` to let it say why."""
        if self.type not in (None, int):
            raise _Unplain(text)  # a time (`--since`) or another type: argparse converts it
        try:
            value = int(text) if self.type is int else text
        except ValueError:
            raise _Unplain(text) from None
        if self.choices is not None and value not in self.choices:
            raise _Unplain(text)
        return value


class _Declarations:
    """A command's arguments, recorded from the `add_argument` calls of its declaration.

    That is all of argparse a plain command uses: a declaration that asks for more (actions
    of its own, a mutually exclusive group) finds no such method here, raises `_Unplain`, and
    the command's lines go to argparse.
    """

    def __init__(self) -> None:
        self.options: dict[str, _Option] = {}
        self.positionals: list[_Option] = []
        #: every dest with its default, as argparse starts its namespace
        self.defaults: dict[str, Any] = {"version": None}  # the root parser's --version
        for flags, _help, valued in GLOBAL_OPTIONS:
            self.add_argument(flags, **({} if valued else {"action": "store_true"}))

    def add_argument(self, *flags: str, **spec: Any) -> None:
        option = _Option(flags, spec)
        if option.positional:
            self.positionals.append(option)
        else:
            self.options.update(dict.fromkeys(flags, option))
        self.defaults[option.dest] = option.default

    def __getattr__(self, name: str) -> Any:
        raise _Unplain(name)

    def read(self, tokens: list[str], into: dict[str, Any]) -> None:
        """Set `into`'s values from `tokens`: options anywhere, the words in one run."""
        words: list[str] = []
        ended = False  # the words are over once an option follows them
        queue = iter(tokens)
        for token in queue:
            if not token.startswith("-") or token == "-":
                if ended:
                    raise _Unplain(token)  # argparse would not join the two runs of words
                words.append(token)
                continue
            ended = bool(words)
            flag, equals, text = token.partition("=")
            option = self.options.get(flag)
            if option is None or (equals and option.switch):
                raise _Unplain(token)  # -h, --version, an abbreviation, a typo …
            if option.switch:
                into[option.dest] = True
                continue
            text = text if equals else next(queue, "-")
            if text.startswith("-"):
                raise _Unplain(token)  # a missing value, or one argparse reads as an option
            into[option.dest] = option.value(text)
        self._share(words, into)

    def _share(self, words: list[str], into: dict[str, Any]) -> None:
        """The words to the one positional argument a plain command may declare."""
        if len(self.positionals) > 1 or (words and not self.positionals):
            raise _Unplain(words)  # how argparse shares words between several is its own
        if not self.positionals:
            return
        (word,) = self.positionals
        fits = {None: len(words) == 1, "?": len(words) <= 1, "+": len(words) >= 1, "*": True}
        if not fits.get(word.nargs, False):
            raise _Unplain(words)
        values = [word.value(text) for text in words]
        if word.nargs is None:
            into[word.dest] = values[0]
        elif word.nargs == "?":
            into[word.dest] = values[0] if values else word.default
        else:  # + or *: a list; `*` with no words is the default, else []
            into[word.dest] = values or ([] if word.default is None else word.default)


def quick_parse(argv: list[str]) -> Arguments | None:
    """`argv` read without argparse, or None when argparse must read it."""
    ours, rest = split_runtime_args(argv)
    globals_, tokens = _leading_globals(ours)
    if not tokens or tokens[0] not in COMMANDS:
        return None
    command: Command = load(tokens[0])
    values: dict[str, Any] = {"command": tokens[0]}
    declared = getattr(command, "ACTIONS", None)
    try:
        if declared is None:
            declare, tokens = command.configure, tokens[1:]
        elif len(tokens) > 1 and tokens[1] in declared:
            declare, values["action"], tokens = declared[tokens[1]][1], tokens[1], tokens[2:]
        else:
            return None  # a missing or mistyped action: argparse says which there are
        declarations = _Declarations()
        # `declare` is typed for an argparse parser; `_Declarations` takes the same calls.
        declare(declarations)  # type: ignore[arg-type]
        values = {**declarations.defaults, **values}
        declarations.read(globals_ + tokens, values)
    except _Unplain:
        return None
    return Arguments(**values, rest=rest)


def _leading_globals(ours: list[str]) -> tuple[list[str], list[str]]:
    """The global options before the command word (`alp --json ping`), and the rest."""
    valued = {flags: takes_value for flags, _help, takes_value in GLOBAL_OPTIONS}
    index = 0
    while index < len(ours):
        flag, equals, _value = ours[index].partition("=")
        if flag not in valued:
            break
        index += 2 if valued[flag] and not equals else 1
    return ours[:index], ours[index:]
