"""What to measure: a running endpoint, or a server booted from a contract, as one `Target`.

`score`, `slope` and `bisect` all take the same target options (commands/target_args.py turns them
into a `TargetSpec`) and all reach a server through `open_target`: for `--endpoint` (or
`OPENAI_BASE_URL`) it yields the endpoint as is; for `--contract`/`--reference` (or a bisect
variant) it boots the contract (the launcher installs its engine build first), yields it once
ready, and tears it down on the way out. The
`Target` carries everything a request needs: base URL, model, API key, request options (the
contract's `request:` block folded in) and HTTP options.
"""

from __future__ import annotations

import contextlib
import os
from collections.abc import Callable, Iterator, Mapping
from contextlib import AbstractContextManager
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import TYPE_CHECKING, Any, Protocol

from evalrun.base.errors import UsageError
from evalrun.endpoint.http import HttpOptions
from evalrun.endpoint.options import ApiKey, RequestOptions, normalise_endpoint
from evalrun.provenance import RenderedContract, ServerFacts
from evalrun.serving.contract import Contract, engine_api_key, redact_args
from evalrun.serving.remote.engine import BootProgress

if TYPE_CHECKING:
    from evalrun.serving.launcher import Server

# Given the name of what boots (a contract, a bisect trial), its progress callback
BootWatch = Callable[[str], BootProgress | None]


class RunningServer(Protocol):
    """What a launcher yields: where the booted server answers, and whether it died."""

    base_url: str
    model: str
    boot_seconds: float
    engine_version: str | None

    def exited(self) -> bool: ...


class Launcher(Protocol):
    """Boots a contract and yields the running server (serving.launcher.boot_server is one)."""

    def __call__(
        self, contract: Contract, log_path: Path, *, on_progress: BootProgress | None = None
    ) -> AbstractContextManager[Any]: ...


@dataclass(frozen=True)
class TargetSpec:
    """The target options as given: an endpoint, or a contract (file or the reference) to boot."""

    endpoint: str | None = None
    contract: str | Path | None = None
    reference: bool = False
    sets: tuple[str, ...] = ()
    unsets: tuple[str, ...] = ()
    model: str | None = None
    api_key: ApiKey = ApiKey()
    options: RequestOptions = field(default_factory=RequestOptions)
    http: HttpOptions = HttpOptions()

    @property
    def booted(self) -> bool:
        return bool(self.contract or self.reference)

    def check(self, environ: Mapping[str, str] | None = None) -> TargetSpec:
        """The spec with its endpoint settled (OPENAI_BASE_URL when none is given and nothing is
        booted); UsageError for combinations that make no sense."""
        if self.contract and self.reference:
            raise UsageError("pass either --contract FILE or --reference, not both")
        if (self.sets or self.unsets) and not self.booted:
            raise UsageError("--set/--unset change a contract; add --contract FILE or --reference")
        if self.booted and self.endpoint:
            raise UsageError(
                "--endpoint and --contract/--reference exclude each other: "
                "a contract boots its own endpoint"
            )
        if self.booted and self.model:
            raise UsageError(
                "a contract names its model; use --set served_model_name=NAME instead of --model"
            )
        if self.booted or self.endpoint:
            return self
        env = os.environ if environ is None else environ
        if env.get("OPENAI_BASE_URL"):
            return TargetSpec(**{**self.__dict__, "endpoint": env["OPENAI_BASE_URL"]})
        raise UsageError(
            "pass --endpoint URL (e.g. http://127.0.0.1:8000/v1) or set OPENAI_BASE_URL, "
            "or --contract FILE / --reference to boot a server"
        )

    def resolved(self) -> tuple[TargetSpec, Contract | None]:
        """The spec checked, with the contract it boots loaded (once: the caller keeps it)."""
        spec = self.check()
        return spec, spec.load_contract() if spec.booted else None

    def load_contract(self) -> Contract:
        """The contract to boot, with --set/--unset applied."""
        from evalrun.serving.contract import load_contract, reference_contract_path

        path = reference_contract_path() if self.reference else self.contract
        if path is None:
            raise UsageError("pass --contract FILE or --reference")
        return load_contract(path, sets=list(self.sets), unsets=list(self.unsets))


@dataclass(frozen=True)
class Target:
    """A server ready for requests."""

    base_url: str
    model: str | None = None  # None: ask /v1/models
    api_key: ApiKey = ApiKey()
    options: RequestOptions = field(default_factory=RequestOptions)
    http: HttpOptions = HttpOptions()
    contract: RenderedContract | None = None  # the contract as rendered (run.json), when booted
    server: ServerFacts | None = None  # engine version, boot seconds, log path, when booted
    exited: Callable[[], bool] | None = None  # whether the booted process died

    @classmethod
    def endpoint(cls, url: str, **kw: Any) -> Target:
        """The Target answering at `url`, as its OpenAI base URL (the one place a URL is
        normalised: a user's endpoint, or the one a launcher yields)."""
        return cls(base_url=normalise_endpoint(url), **kw)


def served_target(spec: TargetSpec, contract: Contract, server: Server) -> Target:
    """The Target of a server booted from `contract` (the launcher yielded `server`)."""
    contract_doc, server_doc = record_for_run(contract, server)
    key = engine_api_key(contract)  # an engine booted with a key accepts that key only
    return Target.endpoint(
        server.base_url,
        model=server.model,
        api_key=ApiKey(*key) if key else spec.api_key,
        options=spec.options.with_contract(contract.request),
        http=replace(spec.http, proxies=False),  # a server evalrun booted here: no proxy between
        contract=contract_doc,
        server=server_doc,
        exited=server.exited,
    )


def record_for_run(contract: Contract, server: Server) -> tuple[RenderedContract, ServerFacts]:
    """(contract, server) for run.json: rendered argv, redacted env, version, boot time."""
    contract_doc: RenderedContract = {
        "name": contract.name,
        "engine": contract.engine,
        "hash": server.contract_hash,
        "argv": server.argv,
        "env": server.env_redacted,
        "path_prepend": contract.expanded_path_prepend(),
        "request": contract.request,
        "health": contract.health_path,
        "model": contract.model,
        "args": redact_args(contract.args),
        "deterministic": contract.deterministic,
    }
    if contract.by_design:
        contract_doc["by_design"] = dict(contract.by_design)
    if server.build is not None:
        contract_doc["engine_build"] = server.build
    server_doc: ServerFacts = {
        "base_url": server.base_url,
        "model": server.model,
        "engine_version": server.engine_version,
        "version_source": server.version_source,
        "boot_seconds": server.boot_seconds,
        "log_path": str(server.log_path),
        "port": server.port,
    }
    if server.image:
        server_doc["image"] = server.image
    return contract_doc, server_doc


@contextlib.contextmanager
def open_target(
    spec: TargetSpec,
    contract: Contract | None = None,
    log_path: Path | None = None,
    *,
    watch: BootWatch | None = None,
    launcher: Launcher | None = None,
) -> Iterator[Target]:
    """Yield the spec's target, the one place a target is reached: the endpoint as is, or
    `contract` (the spec's, loaded once by the caller, or a bisect variant) booted with its log
    at `log_path`, `watch(contract.name)` told its progress, torn down afterwards."""
    if contract is not None:
        if log_path is None:
            raise UsageError("a booted target needs a log path")  # pragma: no cover - a bug
        if launcher is None:
            from evalrun.serving.launcher import boot_server

            launcher = boot_server
        on_progress = watch(contract.name) if watch is not None else None
        with launcher(contract, log_path, on_progress=on_progress) as server:
            yield served_target(spec, contract, server)
        return
    if spec.booted:
        raise UsageError("a booted target needs its contract")  # pragma: no cover - a bug
    if not spec.endpoint:
        raise UsageError("pass --endpoint URL, or --contract FILE / --reference")
    yield Target.endpoint(
        spec.endpoint,
        model=spec.model,
        api_key=spec.api_key,
        options=spec.options,
        http=spec.http,
    )
