"""The commands. Each reads its input, calls the matcher, renders, and returns an exit code."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Annotated

import typer

from dtypefix.matcher.explain import check as check_settings
from dtypefix.matcher.explain import explain_incident, incident_from
from dtypefix.matcher.observation import Note

from .explain_command import attachments, explain_command, explain_input, report_document
from .failure import say_failure
from .formats import Document, emit
from .inputs import InputError, read_text_file, this_env_freeze
from .json_output import entry_json, search_json
from .markdown import format_entry, format_search
from .options import (
    ConfigOption,
    FormatOption,
    FreezeOption,
    KbOption,
    LangOption,
    ThisEnvOption,
    app,
    catalog_for,
    lang_of,
)

KbRootOption = Annotated[
    Path | None,
    typer.Option("--kb-root", help="The dtypefix checkout (or its kb/) to work on; found at or above . when absent."),
]
TopOption = Annotated[int, typer.Option("--top", "-n", min=1, help="How many matches to explain in full.")]
DetailsOption = Annotated[
    bool,
    typer.Option("--details", help="Add every piece of evidence, the cause, every fix step and the references."),
]


LogArgument = Annotated[
    str | None,
    typer.Argument(
        help="A log file (plain or .gz), or a run's per-rank folder (torchrun --log-dir, *rank<N>* files); "
        "standard input when absent or '-'."
    ),
]
"""The log that ``explain`` and ``report`` read."""


@app.command()
def explain(
    file: LogArgument = None,
    freeze: FreezeOption = None,
    config: ConfigOption = None,
    this_env: ThisEnvOption = False,
    lang: LangOption = None,
    fmt: FormatOption = None,
    top: TopOption = 3,
    details: DetailsOption = False,
    kb: KbOption = None,
) -> int:
    """Explain a failure: the likely cause, the fix, and why dtypefix believes it.

    Reads a traceback, a whole multi-rank log or a pasted bug report (pip freeze and configs inside are read
    too). Exit code 0 when a known cause matched, 1 when none did, 2 on bad input.

    Example: torchrun train.py 2>&1 | dtypefix explain --config ds_z3.json --this-env
    """
    return explain_command(file, freeze, config, this_env, lang, fmt, top, details, kb)


@app.command()
def show(
    entry_id: Annotated[str, typer.Argument(metavar="ID", help="An entry id (DTF201) or slug.")],
    lang: LangOption = None,
    fmt: FormatOption = None,
    kb: KbOption = None,
) -> int:
    """Show one knowledge-base entry.

    Exit code 0 when the entry exists, 1 when none has that id or slug.

    Example: dtypefix show DTF200 --lang zh
    """
    catalog = catalog_for(kb)
    entry = catalog.get(entry_id)
    if entry is None:  # "none was found", as for explain and search: exit 1, not a usage error
        typer.echo(f"dtypefix: no entry {entry_id!r}; try: dtypefix search {entry_id}", err=True)
        return 1
    one = lang_of(lang)
    emit(fmt, sys.stdout, Document(lambda: format_entry(entry, one), lambda: entry_json(entry), lang=one))
    return 0


@app.command()
def check(
    config: ConfigOption = None,
    freeze: FreezeOption = None,
    this_env: ThisEnvOption = False,
    flags: Annotated[
        str, typer.Option("--flags", help="The launch command line, e.g. '--bf16 True --deepspeed ds.json'.")
    ] = "",
    lang: LangOption = None,
    fmt: FormatOption = None,
    details: DetailsOption = False,
    kb: KbOption = None,
) -> int:
    """Pre-flight: warn about known-bad settings before anything crashes.

    Exit code 1 when a known-bad combination is found, 0 when none is, 2 on bad input.

    Example: dtypefix check --config ds_z3.json --flags "--bf16 True" --this-env
    """
    if not config and not freeze and not this_env and not flags:
        raise InputError("nothing to check: give --config, --freeze, --this-env or --flags")
    attached = attachments(freeze, config, this_env)
    report = check_settings(
        freeze=attached.freeze,
        configs=attached.configs,
        flags=flags,
        catalog=catalog_for(kb),
        environment=attached.environment,
    )
    emit(fmt, sys.stdout, report_document(report, lang_of(lang), 0, "check", details))
    return 1 if report.found else 0


@app.command()
def lint(
    paths: Annotated[
        list[Path] | None, typer.Argument(help="Entry files or KB folders; the checkout's kb/ when absent.")
    ] = None,
    kb: KbOption = None,
    kb_root: KbRootOption = None,
) -> int:
    """Validate entries: schema, safe regexes, both languages, references, ids, canonical form, and that each
    example ranks its own entry first while its counter-examples do not.

    Entries are checked against the checkout's KB (found at or above the paths or the current folder, or named
    with --kb-root); a private KB outside any checkout is checked against the installed one.

    Example: dtypefix lint kb/deepspeed
    """
    from dtypefix.kbtools.lint import lint_paths
    from dtypefix.matcher.catalog import builtin_kb_dir, entry_files, load_catalog

    from .checkout import checkout_kb, find_checkout_kb

    if paths and kb_root is None:
        base = find_checkout_kb(paths[0]) or find_checkout_kb(Path.cwd())
    else:
        base = checkout_kb(kb_root, "lint")
    targets = [p.resolve() for p in paths] if paths else [base] if base else []
    for target in targets:
        if not target.exists():
            raise InputError(f"{target}: no such file or folder")
    main_kb = base or builtin_kb_dir().resolve()
    extra = [t for t in targets if not t.is_relative_to(main_kb)]
    extra_roots = [
        t.parent if t.is_dir() and any(t.glob("*.yaml")) else t if t.is_dir() else t.parent.parent for t in extra
    ]
    catalog = load_catalog(
        [*([base] if base else []), *dict.fromkeys(extra_roots), *(kb or [])],
        include_builtin=base is None,
        cache_dir=None,
    )
    problems = lint_paths(targets, catalog)
    for problem in problems:
        typer.echo(str(problem))
    count = sum(1 for t in targets for _ in entry_files(t))
    entries = f"{count} entr{'y' if count == 1 else 'ies'}"
    if base is not None and base.resolve() in targets:  # the whole KB: how many version claims a proof backs
        from dtypefix.kbtools.proofs import kb_coverage

        covered = kb_coverage(base, {e.id: e for e in catalog.entries})
        typer.echo(
            f"dtypefix lint: warning: {len(covered.unproven)} of {covered.total} version claims have no proof record "
            "(list them: python -m dtypefix.kbtools.prove --unproven)",
            err=True,
        )
    if problems:
        typer.echo(f"dtypefix lint: {len(problems)} problem(s) in {entries} (against the KB in {main_kb})", err=True)
        return 1
    typer.echo(f"dtypefix lint: {entries} OK (against the KB in {main_kb})", err=True)
    return 0


@app.command()
def fmt(
    paths: Annotated[
        list[Path] | None,
        typer.Argument(help="Entry files or KB folders to rewrite in canonical form; the checkout's kb/ when absent."),
    ] = None,
    check_only: Annotated[
        bool, typer.Option("--check", help="Only report files that are not canonical (exit 1).")
    ] = False,
    kb_root: KbRootOption = None,
) -> int:
    """Rewrite entries in canonical form (key order, block text) so diffs show content, not style.

    Never rewrites the installed KB: without paths it works on the checkout found at or above the current folder
    (or --kb-root).

    Example: dtypefix fmt kb/deepspeed/zeropp-quantized-weights-under-bf16.yaml
    """
    from dtypefix.kbtools.canonical import canonical_text
    from dtypefix.kbtools.lint import comment_cuts
    from dtypefix.matcher.catalog import entry_files, read_entry_mapping
    from dtypefix.matcher.entry import EntryError

    from .checkout import checkout_kb, refuse_installed

    if not paths:
        paths = [checkout_kb(kb_root, "fmt")]
    refuse_installed(paths, "fmt")

    changed = 0
    for root in paths:
        if not root.exists():
            raise InputError(f"{root}: no such file or folder")
        for path, _ in entry_files(root):
            try:
                data = read_entry_mapping(path)
            except EntryError as exc:
                typer.echo(f"dtypefix fmt: skipped: {exc}", err=True)
                continue
            original = path.read_text(encoding="utf-8")
            cuts = comment_cuts(original)
            if cuts:  # rewriting would make YAML's silent cut permanent
                for line, key in cuts:
                    typer.echo(
                        f"dtypefix fmt: skipped: {path}:{line}: {key}: an unquoted ' #' cuts the value; quote it",
                        err=True,
                    )
                continue
            text = canonical_text(data)
            if original != text:
                changed += 1
                if check_only:
                    typer.echo(f"{path}: not canonical")
                else:
                    path.write_text(text, encoding="utf-8")
                    typer.echo(f"reformatted {path}", err=True)
    return 1 if check_only and changed else 0


@app.command()
def search(
    query: Annotated[
        str, typer.Argument(help="Words from the error message, a package, a tag, an id — or Chinese text.")
    ],
    limit: Annotated[int, typer.Option("--limit", "-n", min=1, help="How many results.")] = 10,
    fmt: FormatOption = None,
    lang: LangOption = None,
    kb: KbOption = None,
) -> int:
    """Search the knowledge base by the words of a message, a package, a tag, an id or the text, in English or
    Chinese (设备 finds "device"; a typo still finds its word).

    Exit code 0 when something matched, 1 when nothing did.

    Example: dtypefix search "unscale fp16"
    """
    from dtypefix.matcher.search import search as run_search

    if not query.strip():
        raise InputError("empty query")
    hits = run_search(catalog_for(kb).entries, query, limit=limit)
    one = lang_of(lang)
    emit(fmt, sys.stdout, Document(lambda: format_search(hits, query, one), lambda: search_json(hits, query), lang=one))
    return 0 if hits else 1


@app.command()
def new(
    area: Annotated[
        str,
        typer.Option(
            prompt="Area (torch, deepspeed, accelerate, fsdp, peft, kernels, devices, hardware, frameworks, family)",
            help="The KB folder.",
        ),
    ],
    title: Annotated[str, typer.Option(prompt="Title (English): what fails, not the fix", help="English title.")],
    message: Annotated[
        str, typer.Option(prompt="Error message (a line as printed)", help="The error line; becomes the first pattern.")
    ],
    example: Annotated[
        Path | None, typer.Option("--example", help="A log with the real failure, copied as the first example.")
    ] = None,
    slug: Annotated[str | None, typer.Option(help="File name; derived from the title when absent.")] = None,
    kb_root: Annotated[
        Path | None, typer.Option("--kb-root", help="KB to write into; the project's kb/ by default.")
    ] = None,
) -> int:
    """Scaffold a new entry and its example folder, with the next free id of the area.

    The skeleton is schema-valid but full of TODO(dtypefix new) markers that lint rejects until replaced.

    Example: dtypefix new --area deepspeed --title "..." --message "RuntimeError: ..." --example my.log
    """
    from .scaffold import scaffold_entry

    root = kb_root or _local_kb()
    log_text = read_text_file(str(example), "example") if example else None
    path = scaffold_entry(root, area, title, message, log_text, slug)
    typer.echo(f"wrote {path} and {path.with_suffix('')}/; next: fill the TODOs, then `dtypefix lint {path}`")
    return 0


def _local_kb() -> Path:
    """Where ``new`` writes without ``--kb-root``: the current directory's KB (a checkout or a private KB), the
    checkout above it, or the first ``DTYPEFIX_KB`` folder; never the installed package."""
    import os

    from .checkout import find_checkout_kb

    for candidate in (Path("kb"), Path()):
        if (candidate / "ids.txt").is_file():
            return candidate
    above = find_checkout_kb(Path.cwd())
    if above is not None:
        return above
    private = [p for p in os.environ.get("DTYPEFIX_KB", "").split(os.pathsep) if p]
    if private:
        return Path(private[0])
    raise InputError(
        "no KB here (no kb/ids.txt): run in a dtypefix checkout or a private KB folder, "
        "or pass --kb-root DIR (a new folder starts a private KB)"
    )


@app.command()
def docs(
    out: Annotated[
        Path | None, typer.Option("--out", help="Where the Markdown pages go; the checkout's docs/kb by default.")
    ] = None,
    check_only: Annotated[
        bool, typer.Option("--check", help="Exit 1 when docs/kb or a generated schema is stale, writing nothing.")
    ] = False,
    html: Annotated[
        Path | None, typer.Option("--html", help="Also render a static HTML site into this folder.")
    ] = None,
    kb: Annotated[
        list[Path] | None,
        typer.Option("--kb", help="Also publish this private KB folder (DTYPEFIX_KB is never published by itself)."),
    ] = None,
    kb_root: KbRootOption = None,
) -> int:
    """Regenerate docs/kb/ (a page per entry, indexes by family, package and tag, a coverage table) from kb/, and
    in a checkout the files generated from the registries (kb/schema.json's match block, the JSON output schema).

    Works on a checkout (found at or above the current folder, or --kb-root): the pages come from its kb/ and
    census/, never from the installed copy of the KB.

    Example: dtypefix docs --check
    """
    from dtypefix.matcher.catalog import load_catalog

    from .checkout import checkout_kb
    from .docs import NotOursError, kb_pages, sync_pages, to_html_site
    from .generated import generated_files

    kb_dir = checkout_kb(kb_root, "docs")
    root = kb_dir.parent
    out = out if out is not None else root / "docs" / "kb"
    # Only the checkout's KB and folders named here: a private KB in DTYPEFIX_KB is not published by accident.
    pages = kb_pages(load_catalog([kb_dir, *(kb or [])], include_builtin=False, cache_dir=None), kb_dir)
    # Only pages this command generated (they carry its header) are ever replaced or removed; a file of someone
    # else's at a page's name, or a symlink below --out, is refused before anything is written.
    try:
        plan = sync_pages(out, pages, write=not check_only)
        if html is not None and not check_only:
            sync_pages(html, to_html_site(pages), write=True)
    except NotOursError as exc:
        raise InputError(str(exc)) from None
    stale, extra = list(plan.stale), list(plan.extra)
    # The schema and docs generated from the registries, in the checkout.
    files = generated_files(root)
    stale_files = sorted(
        name
        for name, text in files.items()
        if not (root / name).is_file() or (root / name).read_text(encoding="utf-8") != text
    )
    if check_only:
        for name in stale + extra:
            typer.echo(f"{out / name}: stale")
        for name in stale_files:
            typer.echo(f"{root / name}: stale")
        if stale or extra or stale_files:
            typer.echo(f"dtypefix docs: {out} is stale; run `dtypefix docs` and commit the result", err=True)
            return 1
        typer.echo(f"dtypefix docs: {out.resolve()} is current ({len(pages)} pages, from {kb_dir})", err=True)
        return 0
    for name in stale_files:
        (root / name).write_text(files[name], encoding="utf-8")
    written = len(stale) + len(stale_files)
    typer.echo(f"dtypefix docs: {written} page(s) written, {len(extra)} removed, {len(pages)} in all", err=True)
    return 0


def _configs_named_in(command: list[str]) -> tuple[list[tuple[str, str]], list[Note]]:
    """Config files a launch command names (``--deepspeed ds.json``, ``--config_file acc.yaml``), as (name, text)."""
    import shlex

    from dtypefix.matcher.flags import parse_flags

    found: list[tuple[str, str]] = []
    notes: list[Note] = []
    for name in parse_flags("python " + shlex.join(command)).files:
        path = Path(name)
        if path.is_file():
            try:
                found.append((path.name, read_text_file(name, "config")))
            except InputError as exc:  # a 600 MB --train_file.json or a binary: a note, not a crash
                notes.append(Note(name, str(exc).removeprefix(f"config {name}: ")))
    return found, notes


@app.command(context_settings={"allow_extra_args": True, "ignore_unknown_options": True})
def run(
    command: Annotated[list[str], typer.Argument(help="The command to run, after `--`.")],
    lang: LangOption = None,
    fmt: FormatOption = None,
    top: TopOption = 1,
    details: DetailsOption = False,
    kb: KbOption = None,
) -> int:
    """Run a command, pass its output through unchanged, and explain the failure if it fails.

    The explanation goes to stderr after the command's own output and uses this environment's packages and the
    config files named on the command line. The command's exit code is returned unchanged.

    Example: dtypefix run -- torchrun --nproc_per_node 8 train.py --deepspeed ds_z3.json --bf16 True
    """
    from .runner import run_command

    try:
        result = run_command(command)
    except OSError as exc:
        # As a shell does: 127 when the command is not found, 126 when it cannot be executed (no permission, not
        # an executable format: ENOEXEC).
        typer.echo(f"dtypefix: cannot run {command[0]!r}: {exc.strerror or exc}", err=True)
        return 127 if isinstance(exc, FileNotFoundError) else 126
    if result.returncode == 0:
        return 0
    from dtypefix.matcher.source import decode

    try:
        text = decode(result.tail) + "\n$ " + " ".join(command)
        configs, notes = _configs_named_in(command)
        incident = incident_from(text, configs=configs, notes=notes, environment=this_env_freeze())
        report = explain_incident(incident, catalog_for(kb))
        if report.found:
            sys.stderr.write("\n")
            emit(fmt, sys.stderr, report_document(report, lang_of(lang), top, "run", details))
    except Exception as exc:
        say_failure(exc)
    return result.returncode


@app.command()
def report(
    file: LogArgument = None,
    freeze: FreezeOption = None,
    config: ConfigOption = None,
    this_env: ThisEnvOption = False,
    fmt: FormatOption = None,
    kb: KbOption = None,
) -> int:
    """Write a ready-to-file bug report (error, environment, configs, matched entries) with secrets removed.

    Tokens (Hugging Face, W&B, OpenAI-style, AWS, bearer), e-mail addresses, user names in home paths,
    hostnames and IP addresses are replaced; the report lists what was removed.

    Example: dtypefix report train.log --config ds_z3.json --this-env > issue.md
    """
    from .report import format_bug_report, report_data

    result, attached = explain_input(file, freeze, config, this_env, kb)
    data = report_data(result, attached.config_texts)
    emit(fmt, sys.stdout, Document(lambda: format_bug_report(data), lambda: data))
    return 0
