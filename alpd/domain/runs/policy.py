"""Policy: everything one execution may do, built from its agent and its request alone.

Invariant 1 (docs/contract.md): the Thread is not a source of authority. `build_policy` takes the
AgentDefinition (owner's config), the PolicyRequest (what the authenticated caller asked
for) and the ThreadBinding (which snapshot the run opens on) — and nothing else. There is
no parameter through which a title, a snapshot line, a pin or a label could reach it, so
no edit of thread state can widen a run.

Invariant 2: the binding `{id, contextRevision, contextDigest}` is a field of the policy,
so it is inside `policyHash` — the stored policy document proves which snapshot its root
opened on. The hash is sha256 of the RFC 8785 bytes of the policy (`policy_document`).

Workspace: the rule `thread` uses `request.workspace` (the git top level of the directory
the run was requested from — computed from the request, the way a thread's workspace is
computed at creation, and never read back from the stored thread row, which would make the
row a source of authority), `cwd` uses `request.cwd` (falling back to the workspace for kinds
that have no caller directory), and an absolute path is used as is.

Compatibility: `version` names this document's shape; new fields get defaults and never
change the meaning of old ones (msgspec schema-evolution rules), so old hashes stay valid.
A stored document is hashed as stored; version 1 documents still decode. Version 2: the
origin is structured per kind and leaves unset fields out (see `Origin`). Version 3: `args`
are stored secret-filtered (`redact_argv`: a token on a command line was stored in clear)
and `argsDigest`, the digest of the verbatim argv, says which arguments were authorized —
inside `policyHash`, so an edit of either is caught like any other. The verbatim argv is
never stored: it lives in memory from the request (or the agent's definition) to the spawn,
which first checks it against `argsDigest` (`check_args`); a run re-adopted after a restart
needs no argv. Documents of versions 1 and 2 (verbatim `args`, no `argsDigest`) verify as
they are. Version 4: the run's guard rails, `timeoutSeconds` and `budgetUsd`
(`alpd.domain.runs.limits`: the request's, else the agent's), left out when unset, so a
document without them has the bytes it had.

Arguments: an agent that fixes `args` in its definition runs with exactly those; a request
naming other arguments is refused, so a fixed role cannot be pointed at another program.
"""

from __future__ import annotations

from typing import Final, Literal

import msgspec

from alpd.domain.canonical import canonical_json, digest_of, sha256_digest
from alpd.domain.runs.agents import AgentDefinition
from alpd.domain.runs.limits import RunLimits, effective_limits
from alpd.domain.secrets.filter import redact_argv
from alpd.errors import ExecutionPolicyTampered, InvalidArgument

SessionKind = Literal["interactive", "push", "scheduled", "sub-agent", "temp"]
SESSION_KINDS: Final[tuple[SessionKind, ...]] = (
    "interactive",
    "push",
    "scheduled",
    "sub-agent",
    "temp",
)
POLICY_VERSION: Final = 4


class ThreadBinding(msgspec.Struct, frozen=True, kw_only=True, rename="camel"):
    """The snapshot a root opens on; `None` in a policy means `legacy-unthreaded`."""

    id: str
    context_revision: int
    context_digest: str


class Origin(msgspec.Struct, frozen=True, kw_only=True, rename="camel", omit_defaults=True):
    """Why an execution exists, written by the code path that creates it (never a client).

    `door` is how the request came in (`cli`, `editor`, `scheduler`, `delegate`, …) and `by`
    who sent it (`uid:N`, a schedule, an execution). Per kind: `scheduled` carries
    `scheduleId`, `fireTime` and `missed` (fires coalesced into this one); `push` its
    `pushSource` (the sender's label); `sub-agent` its `parentExecutionId`; a handoff its
    `handoffId`; any kind may say its `purpose` in a few words.

    Unset fields are left out of the document, so a field added later changes no existing
    policy's bytes (version 1 wrote `parentExecutionId` and an unused `trigger` as nulls).
    """

    door: str
    by: str
    parent_execution_id: str | None = None
    schedule_id: str | None = None
    fire_time: str | None = None
    missed: int | None = None
    push_source: str | None = None
    handoff_id: str | None = None
    purpose: str | None = None
    #: `thread/adopt`: the legacy-unthreaded execution (an imported session) this root reads
    adopted_from: str | None = None
    #: a schedule's or a push's report destinations (`to`), resolved: `chats`, `telegram`,
    #: `wechat`, `thread:ID`, `none` (alpd.domain.report_destinations)
    report_to: tuple[str, ...] | None = None


class PolicyRequest(msgspec.Struct, frozen=True, kw_only=True, rename="camel"):
    """What the caller asked for. `runtime=None` means the agent's runtime."""

    agent: str
    kind: SessionKind
    headless: bool
    workspace: str
    origin: Origin
    runtime: str | None = None
    cwd: str | None = None
    args: tuple[str, ...] = ()
    #: the time limit and cost cap asked for this run (each replaces the agent's)
    limits: RunLimits = RunLimits()


class Policy(msgspec.Struct, frozen=True, kw_only=True, rename="camel", omit_defaults=True):
    """The immutable authority of one execution; stored as `policy_document` bytes.

    `args` are secret-filtered from version 3 on, and `args_digest` is `args_digest_of` the
    verbatim ones (left out of older documents, which stay byte-identical)."""

    version: int
    runtime: str
    agent: str
    allowed_tools: tuple[str, ...]
    disallowed_tools: tuple[str, ...]
    permission_mode: str | None
    workspace: str
    delegates_to: tuple[str, ...]
    kind: SessionKind
    headless: bool
    args: tuple[str, ...]
    model: str | None
    instructions: str | None
    origin: Origin
    binding: ThreadBinding | None
    args_digest: str | None = None
    #: version 4: the run is ended past this many seconds (`timed-out`)
    timeout_seconds: int | None = None
    #: version 4: the run is ended once its cost reaches this (`budget-exceeded`)
    budget_usd: float | None = None
    #: version 4: the run is ended once its tokens reach this (`budget-exceeded`); left out
    #: when unset, so a document without it keeps its hash
    budget_tokens: int | None = None

    @property
    def limits(self) -> RunLimits:
        return RunLimits(
            timeout_seconds=self.timeout_seconds,
            budget_usd=self.budget_usd,
            budget_tokens=self.budget_tokens,
        )


def run_args(agent: AgentDefinition, request: PolicyRequest) -> tuple[str, ...]:
    """The verbatim runtime arguments of a run: the agent's own, else the request's. Kept in
    memory for the spawn only; the policy holds them filtered, and their digest."""
    return agent.args or request.args


def args_digest_of(args: tuple[str, ...]) -> str:
    """`sha256:<hex>` of the RFC 8785 bytes of the argument list."""
    return digest_of(list(args))


def check_args(policy: Policy, args: tuple[str, ...]) -> None:
    """EXECUTION_POLICY_TAMPERED unless `args` are the verbatim arguments `policy`
    authorized: their digest is its `argsDigest` and their filtered form its `args` (a
    version 1 or 2 policy holds them verbatim)."""
    if policy.args_digest is None:
        authorized = policy.args == args
    else:
        authorized = args_digest_of(args) == policy.args_digest and redact_argv(args) == policy.args
    if not authorized:
        raise ExecutionPolicyTampered(
            "the arguments about to be run are not the ones the stored policy authorized; "
            "nothing was started",
            argsDigest=policy.args_digest,
        )


def build_policy(
    agent: AgentDefinition, request: PolicyRequest, binding: ThreadBinding | None
) -> Policy:
    """The policy of one run. Raises INVALID_ARGUMENT for a request that contradicts itself."""
    _check_request(agent, request)
    limits = effective_limits(agent.limits, request.limits)
    return Policy(
        version=POLICY_VERSION,
        runtime=agent.runtime,
        agent=agent.name,
        allowed_tools=agent.allowed_tools,
        disallowed_tools=agent.disallowed_tools,
        permission_mode=agent.permission_mode,
        workspace=_workspace(agent, request),
        delegates_to=agent.delegates_to,
        kind=request.kind,
        headless=request.headless,
        args=redact_argv(run_args(agent, request)),
        model=agent.model,
        instructions=agent.instructions,
        origin=request.origin,
        binding=binding,
        args_digest=args_digest_of(run_args(agent, request)),
        timeout_seconds=limits.timeout_seconds,
        budget_usd=limits.budget_usd,
        budget_tokens=limits.budget_tokens,
    )


def policy_document(policy: Policy) -> bytes:
    """The canonical (RFC 8785) bytes of the policy: what is stored and hashed."""
    return canonical_json(policy)


def policy_hash(policy: Policy) -> str:
    """`sha256:<hex>` of `policy_document(policy)`; binding included (invariant 2)."""
    return digest_of(policy)


def decode_policy(document: bytes) -> Policy:
    """A stored policy document back into a Policy (strict: unknown shapes fail)."""
    return msgspec.json.decode(document, type=Policy)


def verify_policy_document(document: bytes, stored_hash: str) -> None:
    """EXECUTION_POLICY_TAMPERED unless `document` still hashes to `stored_hash`."""
    computed = sha256_digest(document)
    if computed != stored_hash:
        raise ExecutionPolicyTampered(
            "a stored execution policy no longer matches its policyHash; it was edited "
            "outside alpd, so nothing is decided on it",
            storedHash=stored_hash,
            computedHash=computed,
        )


def verify_policy(document: bytes, stored_hash: str) -> Policy:
    """A stored policy, re-hashed before it decides anything.

    EXECUTION_POLICY_TAMPERED unless the document hashes to `stored_hash`, decodes, and is
    the canonical form of what it decodes to: an edited document (a widened `delegatesTo`,
    a re-pointed binding) is never obeyed, whatever the database's triggers allowed.
    """
    verify_policy_document(document, stored_hash)
    try:
        policy = decode_policy(document)
    except (msgspec.DecodeError, msgspec.ValidationError) as exc:
        raise ExecutionPolicyTampered(
            "a stored execution policy is not a policy document", storedHash=stored_hash
        ) from exc
    if policy_document(policy) != document:
        raise ExecutionPolicyTampered(
            "a stored execution policy is not in canonical form", storedHash=stored_hash
        )
    return policy


def _check_request(agent: AgentDefinition, request: PolicyRequest) -> None:
    if request.agent != agent.name:
        raise InvalidArgument(
            "the request names another agent", agent=request.agent, expected=agent.name
        )
    if request.runtime is not None and request.runtime != agent.runtime:
        # Tool names and permission modes are runtime-specific: a role declared for one
        # runtime cannot be run on another; pick an agent of that runtime instead.
        raise InvalidArgument(
            f"agent {agent.name!r} runs on {agent.runtime!r}, not {request.runtime!r}",
            agent=agent.name,
            runtime=request.runtime,
        )
    if agent.args and request.args and request.args != agent.args:
        raise InvalidArgument(
            f"agent {agent.name!r} fixes its runtime arguments; drop the ones after `--`",
            agent=agent.name,
        )
    if request.kind not in SESSION_KINDS:
        raise InvalidArgument(f"unknown session kind {request.kind!r}", kind=request.kind)
    if request.kind != "interactive" and not request.headless:
        # Only an interactive run has a terminal; every other kind runs under alpd.
        raise InvalidArgument(f"a {request.kind} execution must be headless", kind=request.kind)
    if request.kind == "sub-agent" and request.origin.parent_execution_id is None:
        raise InvalidArgument("a sub-agent execution needs its parent execution id")
    if request.kind == "push" and request.origin.push_source is None:
        raise InvalidArgument("a push execution needs the source that pushed it")
    if request.kind == "scheduled" and (
        request.origin.schedule_id is None or request.origin.fire_time is None
    ):
        raise InvalidArgument("a scheduled execution needs its schedule id and fire time")


def _workspace(agent: AgentDefinition, request: PolicyRequest) -> str:
    rule = agent.workspace_rule
    if rule == "thread":
        return request.workspace
    if rule == "cwd":
        return request.cwd if request.cwd is not None else request.workspace
    return rule
