"""``judge-vllm`` (also ``python -m adapter.cli``): the server-side commands of ``judge_vllm.cli``,
the adapter's HTTP front ends and ``config list|show`` (the bundled configs).

``api`` serves the judge server API (docs/http_api.md), ``openrlhf-rm`` an OpenRLHF remote
reward model (``--reward.remote_url http://HOST:5000/get_reward``). ``audit`` is the pre-flight
probe (``adapter.preflight``): known hacks and controls through the configured reward, exit 1 when
a class is over its threshold, 3 when the judge did not answer some rows. Both need the ``api`` extra
(FastAPI, uvicorn), imported only when one of them runs, so the other commands work on a light
install. ``openrlhf-rm --print-reward-func-path`` prints the in-process alternative, a file for
``--reward.remote_url``, and serves nothing.
"""

from __future__ import annotations

import argparse
import importlib.util
import sys
from pathlib import Path

from adapter.config import bundled_configs, with_judge_url
from adapter.config_reference import reference_markdown
from adapter.integrations.group_collector import DEFAULT_GROUP_WINDOW_S
from adapter.preflight import bundled_probe_rows, load_probe_rows, render_report, run_preflight
from judge_vllm import cli as server_cli

__all__ = ["add_audit_command", "add_config_commands", "add_front_end_commands", "build_parser", "main"]

DESCRIPTION = "Prepare a judge model, serve it with vLLM, talk to it, and serve rewards over HTTP."
# judge-vllm audit's thresholds: the share of a class's wrong answers paid, and of its controls refused.
DEFAULT_MAX_PAID = 0.05
DEFAULT_MAX_REFUSED = 0.2
EXIT_OVER_THRESHOLD = 1
EXIT_NOT_MEASURED = 3


def add_config_commands(sub: server_cli.Subcommands) -> None:
    """Add ``config list``, ``config show NAME`` (the bundled example configs) and ``config
    reference`` (every key, generated from the config model)."""
    config = sub.add_parser("config", help="list or print the bundled reward configs")
    config_sub = config.add_subparsers(dest="config_command", required=True)
    config_sub.add_parser("list", help="the bundled configs, one per line: name and path")
    config_sub.add_parser("reference", help="every config key: type, default, bounds, what it does (markdown)")
    show = config_sub.add_parser("show", help="print one bundled config (copy it and edit)")
    show.add_argument("name", help="a name from 'judge-vllm config list' (reward, trl, verl...)")
    config.set_defaults(run=_config)


def _config(args: argparse.Namespace, extra: list[str]) -> int:
    if args.config_command == "reference":
        print(reference_markdown(), end="")
        return 0
    configs = bundled_configs()
    if args.config_command == "list":
        for name, path in configs.items():
            print(f"{name}\t{path}")
        return 0
    chosen = configs.get(Path(args.name).stem)
    if chosen is None:
        print(f"error: no bundled config {args.name!r}; bundled: {', '.join(configs)}", file=sys.stderr)
        return 2
    print(chosen.read_text(), end="")
    return 0


def add_audit_command(sub: server_cli.Subcommands) -> None:
    """Add ``audit``: the pre-flight probe of the configured reward."""
    audit = sub.add_parser(
        "audit",
        help="pre-flight: known hacks and controls through the configured reward; non-zero when a class fails",
    )
    server_cli.add_judge_url_flag(audit, help="the judge (default: the config's judge_url)")
    audit.add_argument("--config", type=Path, help="the reward config YAML training will use")
    audit.add_argument(
        "--rows",
        type=Path,
        action="append",
        default=[],
        help="more probe rows (JSONL: prompt, completion, answer, answer_type, label, category); repeatable",
    )
    audit.add_argument(
        "--max-paid",
        type=float,
        default=DEFAULT_MAX_PAID,
        help="the share of a class's wrong answers that may be paid",
    )
    audit.add_argument(
        "--max-refused",
        type=float,
        default=DEFAULT_MAX_REFUSED,
        help="the share of a class's controls (right answers) that may be refused",
    )
    audit.set_defaults(run=_audit)


def _audit(args: argparse.Namespace, extra: list[str]) -> int:
    config = with_judge_url(args.config, args.judge_url)
    rows = bundled_probe_rows()
    for path in args.rows:
        try:
            rows += load_probe_rows(path)
        except OSError as err:
            print(f"error: cannot read --rows {path}: {err.strerror}", file=sys.stderr)
            return 2
    report = run_preflight(config, rows, args.max_paid, args.max_refused)
    print(
        f"judge-vllm audit: {report.rows} probe rows, judge {config.judge_url} (profile {config.profile}, "
        f"strategy {config.strategy}, prechecks {'on' if config.prechecks else 'off'}, calibration "
        f"{config.calibration_file or ('shrink' if config.calibration else 'none')})"
    )
    print(render_report(report, args.max_paid, args.max_refused))
    if report.fell_back:  # the rule's fallback answered for the judge: the judge is not measured
        return EXIT_NOT_MEASURED
    if report.failed:
        return EXIT_OVER_THRESHOLD
    print("ok: no class over its threshold")
    return 0


def add_front_end_commands(sub: server_cli.Subcommands) -> None:
    """Add ``api`` and ``openrlhf-rm`` (their shared flags once)."""
    api = sub.add_parser(
        "api", help="serve the judge server API (/judge, /batch_judge, /judge_group, /health, /metrics)"
    )
    api.set_defaults(run=_api)
    rm = sub.add_parser("openrlhf-rm", help="serve an OpenRLHF remote reward model (/get_reward)")
    rm.set_defaults(run=_openrlhf_rm)
    for front, port in ((api, 8889), (rm, 5000)):
        server_cli.add_judge_url_flag(front, help="the vLLM judge (default: the config's judge_url)")
        front.add_argument("--config", type=Path, help="reward config YAML (configs/reward.yaml)")
        front.add_argument(
            "--host", default="127.0.0.1", help="address to listen on (0.0.0.0: every interface)"
        )
        front.add_argument("--port", type=int, default=port, help="port to listen on")
        front.add_argument("--max-body-bytes", type=int, help="413 above this (default 16 MiB)")
        front.add_argument("--max-batch", type=int, help="422 above this many items (default 1024)")
    api.add_argument("--api-key", help="require 'Authorization: Bearer KEY' (default: $JUDGE_API_KEY)")
    rm.add_argument("--answer-type", help="answer type for every query (NUMBER, TEXT, ...)")
    rm.add_argument(
        "--group-size",
        type=int,
        help="with a group: block, the samples per prompt (n_samples_per_prompt): collect them across requests",
    )
    rm.add_argument(
        "--group-window",
        type=float,
        default=DEFAULT_GROUP_WINDOW_S,
        help="with --group-size: seconds a prompt's group collects samples",
    )
    rm.add_argument(
        "--print-reward-func-path",
        action="store_true",
        help="print the in-process reward_func file for OpenRLHF's --reward.remote_url, then exit",
    )


def _api(args: argparse.Namespace, extra: list[str]) -> int:
    from adapter.http import run_api  # the api extra, needed by this command only

    run_api(
        config=args.config,
        judge_url=args.judge_url,
        host=args.host,
        port=args.port,
        api_key=args.api_key,
        max_body_bytes=args.max_body_bytes,
        max_batch=args.max_batch,
    )
    return 0


def _openrlhf_rm(args: argparse.Namespace, extra: list[str]) -> int:
    if args.print_reward_func_path:
        # found, not imported: printing the path needs neither torch nor the api extra
        spec = importlib.util.find_spec("adapter.integrations.openrlhf_reward_func")
        if spec is None or spec.origin is None:
            raise RuntimeError("adapter.integrations.openrlhf_reward_func is missing from this install")
        print(spec.origin)
        return 0
    from adapter.integrations.openrlhf import run_openrlhf_rm  # the api extra, needed by this command only

    run_openrlhf_rm(
        config=args.config,
        judge_url=args.judge_url,
        host=args.host,
        port=args.port,
        answer_type=args.answer_type,
        max_body_bytes=args.max_body_bytes,
        max_batch=args.max_batch,
        group_size=args.group_size,
        group_window=args.group_window,
    )
    return 0


def build_parser() -> argparse.ArgumentParser:
    """The whole ``judge-vllm`` command line: the server-side commands, the front ends, ``config``."""
    return server_cli.build_parser(
        add_front_end_commands, add_config_commands, add_audit_command, description=DESCRIPTION
    )


def main(argv: list[str] | None = None) -> int:
    """Entry point of the ``judge-vllm`` command."""
    return server_cli.main(argv, build_parser())


if __name__ == "__main__":
    sys.exit(main())
