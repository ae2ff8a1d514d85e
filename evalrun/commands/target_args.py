"""The target options of `score`, `slope`, `bisect` and `watch`, declared once.

`add_target_arguments` adds them to a parser (argparse only: `--help` stays fast);
`target_spec(args)` turns the parsed flags into a `TargetSpec` (serving/target.py). Request options
(`--temperature`, `--top-p`, `--request-seed`, `--max-tokens-scale`, `--extra-body`, `--header`) and the
connection options (`--api-key-env`, `--ca-bundle`, `--insecure`) come with every target; a
command that asks as a stored run did (`watch`: as its anchor) leaves out the sampling ones.
"""

from __future__ import annotations

import argparse
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from evalrun.serving.target import TargetSpec


def add_target_arguments(
    parser: argparse.ArgumentParser,
    *,
    endpoint: bool = True,
    contract: bool = True,
    sampling: bool = True,
) -> None:
    """Add the target options; `endpoint=False` / `contract=False` leave out --endpoint/--model
    and --contract/--reference for commands that bring their own (bisect); `sampling=False`
    leaves out the options that decide what is sampled (temperature, top-p, seed, max tokens,
    logprobs) for a command that asks as a stored run did (watch)."""
    target = parser.add_argument_group("what to measure")
    if endpoint:
        target.add_argument(
            "--endpoint",
            metavar="URL",
            help="base URL, e.g. http://127.0.0.1:8000/v1 (the /v1 is optional; "
            "default: $OPENAI_BASE_URL)",
        )
        target.add_argument(
            "--model", help="model name to send (default: the one /v1/models lists)"
        )
    if contract:
        target.add_argument(
            "--contract",
            metavar="FILE",
            help="boot the server this contract describes, measure it, tear it down",
        )
        target.add_argument(
            "--reference",
            action="store_true",
            help="boot the embedded reference endpoint (llama.cpp + SmolLM2-135M)",
        )
    target.add_argument(
        "--set",
        dest="sets",
        action="append",
        default=[],
        metavar="K=V",
        help="override a contract key, e.g. args.load-format=safetensors (repeatable)",
    )
    target.add_argument(
        "--unset",
        dest="unsets",
        action="append",
        default=[],
        metavar="K",
        help="remove a contract key, e.g. args.speculative-config (repeatable)",
    )
    target.add_argument(
        "--deterministic",
        dest="sets",
        action="append_const",
        const="deterministic=true",
        help="make the engine answer one request at a time without a prompt cache (vLLM, sglang, "
        "llama.cpp; = --set deterministic=true): a healthy lane's runs then compare identical",
    )
    conn = parser.add_argument_group("connection")
    conn.add_argument(
        "--api-key-env",
        metavar="VAR",
        help="environment variable with the API key (default: $OPENAI_API_KEY when set)",
    )
    conn.add_argument(
        "--ca-bundle",
        metavar="PATH",
        help="trust the CAs in this PEM file or folder (default: $SSL_CERT_FILE, else the system)",
    )
    conn.add_argument(
        "--insecure", action="store_true", help="do not verify the endpoint's TLS certificate"
    )
    conn.add_argument(
        "--max-response-mb",
        type=float,
        default=8.0,
        metavar="MB",
        help="largest response body read (default 8); a bigger one is an item in error",
    )
    req = parser.add_argument_group(
        "request options (sent with every request; a contract's request: block is the same)"
    )
    if sampling:
        req.add_argument("--temperature", type=float, metavar="T", help="sampling temperature (0)")
        req.add_argument(
            "--top-p", type=float, metavar="P", help="nucleus sampling (engine default)"
        )
        req.add_argument(
            "--request-seed",
            type=int,
            metavar="N",
            help="sampling seed sent with every request, for engines that take one",
        )
        req.add_argument(
            "--max-tokens-scale",
            type=float,
            metavar="F",
            help="multiply every item's max_tokens by F (e.g. 4 for a thinking model)",
        )
    req.add_argument(
        "--extra-body",
        metavar="JSON|@FILE",
        help="merged into every request body: a JSON object or @file.json/@file.yaml, e.g. "
        """'{"chat_template_kwargs": {"enable_thinking": false}}'""",
    )
    req.add_argument(
        "--header",
        dest="headers",
        action="append",
        default=[],
        metavar="K:V",
        help="extra HTTP header on every request (repeatable; values are not stored)",
    )
    if not sampling:
        return
    req.add_argument(
        "--top-logprobs",
        type=int,
        metavar="K",
        help="alternatives per token asked with logprobs on every request (default 5, at most "
        "20): the tokens compare/bisect/signoff judge fidelity on (tokens.jsonl)",
    )
    req.add_argument(
        "--logprob-tokens",
        type=int,
        metavar="T",
        help="tokens of each answer kept with their logprobs (default 128: every probe answer)",
    )
    req.add_argument(
        "--no-logprobs",
        action="store_true",
        help="do not ask for logprobs (no fidelity check against another lane)",
    )


def target_spec(
    args: argparse.Namespace, *, timeout: float | None = None, concurrency: int
) -> TargetSpec:
    """The TargetSpec the parsed flags describe (UsageError on a bad value), built the way a
    score's options build theirs."""
    from evalrun.scoring.options import ScoreOptions
    from evalrun.scoring.plan import target_spec

    options = ScoreOptions(
        endpoint=getattr(args, "endpoint", None),
        contract=getattr(args, "contract", None),
        reference=getattr(args, "reference", False),
        sets=tuple(args.sets),
        unsets=tuple(args.unsets),
        model=getattr(args, "model", None),
        api_key_env=args.api_key_env,
        ca_bundle=args.ca_bundle,
        insecure=args.insecure,
        max_response_mb=args.max_response_mb,
        temperature=getattr(args, "temperature", None),
        top_p=getattr(args, "top_p", None),
        request_seed=getattr(args, "request_seed", None),
        max_tokens_scale=getattr(args, "max_tokens_scale", None),
        extra_body=args.extra_body,
        headers=tuple(args.headers),
        top_logprobs=getattr(args, "top_logprobs", None),
        no_logprobs=getattr(args, "no_logprobs", False),
        logprob_tokens=getattr(args, "logprob_tokens", None),
        timeout=timeout,
        concurrency=concurrency,
    )
    return target_spec(options)
