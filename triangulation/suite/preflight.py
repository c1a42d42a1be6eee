"""The preflight of ``triangulate suite``: every misconfiguration of a suite found before anything starts.

``triangulate suite SUITE --check`` runs it alone; every real run runs it first (``--no_check`` skips it).
It checks, without touching a GPU (``nvidia-smi`` and ``sinfo`` are asked, nothing is loaded on a device):

- each eval task's Python dependencies: the imports of the Python files beside its YAML (lm-eval's own
  tasks' ``utils.py`` and the modules next to it), and which are not installed; the battery's are in the
  extra ``triangulate[battery]`` (:data:`BATTERY`), which the line names;
- each eval task's Hub dataset (``dataset_path``): in the Hugging Face cache, else reachable (not when
  ``HF_DATASETS_OFFLINE``/``HF_HUB_OFFLINE`` is set: then it must be cached);
- each model's weights and tokenizer (``pretrained=``, ``tokenizer=``): a local folder with them, the Hub
  cache, else reachable on the Hub (a gated or missing repository is a problem);
- vLLM for ``engine: vllm`` (``$TRIANGULATE_VLLM`` or ``vllm`` on PATH);
- memory: parameters x dtype bytes x (1 + :data:`KV_HEADROOM`) against the model's GPUs x their memory
  (``nvidia-smi``) x vLLM's default ``--gpu-memory-utilization`` :data:`GPU_MEMORY_UTILIZATION`;
- GPU count: a model needing more GPUs than the node (``--gpus``/``nvidia-smi``) or, under SLURM, than the
  largest node of the partition (``sinfo``) has.

Every problem is one line; all of them come at once (exit status 2). Notes (what was not checked and why,
and which tokenizer the plan counts each model's tokens with) are printed too, never fatal.
"""

from __future__ import annotations

import ast
import functools
import glob
import importlib.util
import os
import sys
from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from plumbing.errors import UserError
from triangulation.suite.gpu_fit import (
    fit_problems,
    gpu_memory_mib,
    memory_problem,
    model_params_b,
    slurm_gpu_memory_mib,
    slurm_node_gpus,
)
from triangulation.suite.serve import ServerError, vllm_command
from triangulation.suite.spec import ModelSpec, Suite

#: the extra that installs the battery's task dependencies: module -> pip name (pyproject.toml's
#: ``[project.optional-dependencies] battery`` lists the same pip names; a test keeps them equal)
BATTERY_EXTRA = "triangulate[battery]"
BATTERY = {"langdetect": "langdetect", "immutabledict": "immutabledict", "pkg_resources": "setuptools<81"}  # IFEval
PIP_NAMES = {"sklearn": "scikit-learn", "yaml": "pyyaml", "PIL": "pillow", "cv2": "opencv-python", **BATTERY}
OURS = {"lm_eval", "lm_eval_tasks", "plumbing", "custom_metrics", "datasets_build", "models", "multiturn", "triangulation"}
WEIGHT_FILES = ("*.safetensors", "*.bin", "*.gguf", "*.pt")
TOKENIZER_FILES = ("tokenizer.json", "tokenizer_config.json", "tokenizer.model", "vocab.json")


@dataclass
class Findings:
    problems: list[str] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)


def preflight(suite: Suite, executor: str = "local", gpus: list[str] | None = None) -> Findings:
    """Every problem of ``suite`` for a run on ``executor`` with the node's ``gpus`` (see the module)."""
    found = Findings()
    task_checks(suite, found)
    for model in suite.models:
        model_checks(model, found)
    vllm_check(suite, found)
    gpu_checks(suite, executor, gpus or [], found)
    return found


# --- tasks: Python dependencies and datasets ---------------------------------------------------------


@functools.cache
def imported_modules(folder: Path) -> frozenset[str]:
    """Top-level modules the Python files of ``folder`` import (absolute imports, stdlib and ours left out)."""
    names: set[str] = set()
    for path in sorted(folder.glob("*.py")):
        try:
            tree = ast.parse(path.read_text(encoding="utf-8", errors="replace"))
        except SyntaxError:
            continue
        optional = {id(n) for t in ast.walk(tree) if isinstance(t, ast.Try) for b in t.body for n in ast.walk(b)}
        for node in ast.walk(tree):
            if id(node) in optional:  # `try: import x` / `except ImportError:` is not a requirement
                continue
            if isinstance(node, ast.Import):
                names |= {a.name.split(".")[0] for a in node.names}
            elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
                names.add(node.module.split(".")[0])
    return frozenset(n for n in names if n not in sys.stdlib_module_names and n not in OURS)


def missing_modules(folder: Path) -> list[str]:
    return sorted(m for m in imported_modules(folder) if importlib.util.find_spec(m) is None)


def install_hint(modules: Iterable[str]) -> str:
    pips = sorted({PIP_NAMES.get(m, m) for m in modules})
    if all(m in BATTERY for m in modules):
        return f"pip install '{BATTERY_EXTRA}'"
    return "pip install " + " ".join(f"'{p}'" if "<" in p else p for p in pips)


def task_checks(suite: Suite, found: Findings) -> None:
    """Unknown eval tasks, missing Python dependencies (one line per task entry), datasets (one per dataset)."""
    entries = [t for t in suite.tasks if t.runner == "eval"]
    datasets: dict[str, list[str]] = {}
    loaded: dict[
        str, str | None
    ] = {}  # one load per custom_dataset call (a group's leaves often share one), one check per local-files task
    for entry in entries:
        missing: set[str] = set()
        for name, looked_up in entry.resolved.items():  # each name looked up once, in lm-eval's one task index
            if not looked_up.known:
                found.problems.append(f"task entry {entry.name}: lm-eval knows no task, group or tag {name!r}")
                continue
            if looked_up.refusal is not None:
                found.problems.append(f"task entry {entry.name}: {name}: {looked_up.refusal}")
                continue
            for leaf in looked_up.entries:
                missing |= set(missing_modules(Path(leaf.yaml_path).parent))
                if (path := dataset_path(leaf)) is not None and is_packaged_builder(path):
                    if leaf.name not in loaded and (problem := loaded.setdefault(leaf.name, data_files_problem(leaf))):
                        found.problems.append(f"task {leaf.name} (entry {entry.name}): {problem}")
                elif path is not None:
                    datasets.setdefault(path, []).append(leaf.name)
                elif (problem := custom_dataset_problem(leaf, loaded)) is not None:
                    found.problems.append(f"task {leaf.name} (entry {entry.name}): its data cannot be loaded: {problem}")
        if missing:
            found.problems.append(
                f"task entry {entry.name}: Python packages missing: {', '.join(sorted(missing))}: {install_hint(missing)}"
            )
    for path, tasks in datasets.items():
        if (problem := dataset_problem(path)) is not None:
            more = f" and {len(tasks) - 1} more" if len(tasks) > 1 else ""
            found.problems.append(f"dataset {path} (task {tasks[0]}{more}): {problem}")


def dataset_path(leaf: Any) -> str | None:
    """``dataset_path`` of a task's YAML (its includes merged); None for a ``custom_dataset`` (ours: built data)."""
    from lm_eval.tasks._yaml_loader import load_yaml

    try:
        cfg = load_yaml(leaf.yaml_path, resolve_func=False)
    except Exception:  # noqa: BLE001  (a YAML lm-eval itself would refuse: the run says so)
        return None
    path = cfg.get("dataset_path")
    return None if "custom_dataset" in cfg or not isinstance(path, str) else path


def is_packaged_builder(path: str) -> bool:
    """``dataset_path: json`` (csv, parquet, text, ...): one of ``datasets``' own builders reading local files
    (``dataset_kwargs: data_files``), as a lab's own task folder (a suite's ``include_path:``) often does."""
    from datasets.packaged_modules import _PACKAGED_DATASETS_MODULES

    return path in _PACKAGED_DATASETS_MODULES


def data_files_problem(leaf: Any) -> str | None:
    """Why a packaged builder's ``dataset_kwargs: data_files`` cannot be read: a local file or pattern that
    matches nothing, resolved as ``datasets.load_dataset`` resolves it (relative to the working directory, where
    the suite runs its cells). Remote files (``hf://``, ``https://``) are left to the run. None: all found."""
    from lm_eval.tasks._yaml_loader import load_yaml

    try:
        cfg = load_yaml(leaf.yaml_path, resolve_func=False)
    except Exception:  # noqa: BLE001  (a YAML lm-eval itself would refuse: the run says so)
        return None
    files = (cfg.get("dataset_kwargs") or {}).get("data_files")
    if files is None:
        return f"dataset_path {cfg.get('dataset_path')} reads local files, but its dataset_kwargs name no data_files"
    values = files.values() if isinstance(files, dict) else [files]
    patterns = [str(f) for v in values for f in (v if isinstance(v, list) else [v])]
    for pattern in patterns:
        if "://" in pattern:
            continue
        if not glob.glob(str(Path(pattern).expanduser()), recursive=True):
            where = "" if Path(pattern).expanduser().is_absolute() else f" (relative to the working directory {Path.cwd()})"
            return f"its data file {pattern} is not there{where}"
    return None


def custom_dataset_problem(leaf: Any, loaded: dict[str, str | None]) -> str | None:
    """Why a ``custom_dataset`` task's data cannot be loaded, found by loading it as lm-eval will: its YAML's
    function called with the task's metadata and ``dataset_kwargs`` (lm-eval's ``ConfigurableTask.download``).
    Our tasks on built data load in a moment; CLadder, SimpleToM and NATURAL PLAN read the Hub or a pinned
    download, which offline or unreachable fails here, before the run, in one line. None: it loads."""
    from lm_eval.tasks._yaml_loader import load_yaml

    try:
        cfg = load_yaml(leaf.yaml_path, resolve_func=True)
    except Exception:  # noqa: BLE001  (a YAML lm-eval itself would refuse: the run says so)
        return None
    load = cfg.get("custom_dataset")
    if not callable(load):
        return None
    kwargs = {**(cfg.get("metadata") or {}), **(cfg.get("dataset_kwargs") or {})}
    key = f"{getattr(load, '__module__', '')}.{getattr(load, '__qualname__', load)}:{sorted(kwargs.items())!r}"
    if key not in loaded:
        try:
            load(**kwargs)
            loaded[key] = None
        except Exception as exc:  # noqa: BLE001  (any failure of the loader is the run's failure: one line)
            loaded[key] = " ".join(f"{type(exc).__name__}: {exc}".split())[:300]
    return loaded[key]


def offline() -> bool:
    return any(os.environ.get(v, "").lower() in ("1", "true", "yes", "on") for v in ("HF_HUB_OFFLINE", "HF_DATASETS_OFFLINE"))


def dataset_problem(path: str) -> str | None:
    """None when the dataset is a local folder, in a Hugging Face cache, or (online) reachable on the Hub."""
    if Path(path).expanduser().is_dir():
        return None
    if path.startswith(("/", ".", "~")):
        return "folder not found"
    from huggingface_hub import constants

    datasets_cache = Path(os.environ.get("HF_DATASETS_CACHE") or Path(constants.HF_HOME) / "datasets")
    if (datasets_cache / datasets_cache_name(path)).is_dir() or (
        Path(constants.HF_HUB_CACHE) / f"datasets--{path.replace('/', '--')}"
    ).is_dir():
        return None
    return hub_problem(path, "dataset")


def datasets_cache_name(path: str) -> str:
    """The folder ``datasets`` caches Hub dataset ``path`` in (``namespace___name``, the name in snake case:
    ``pbevan11/EQ-Bench`` -> ``pbevan11___eq-bench``), as its offline fallback looks it up."""
    from datasets.naming import camelcase_to_snakecase

    parts = path.split("/")
    return "___".join([*parts[:-1], camelcase_to_snakecase(parts[-1])])


def hub_problem(repo: str, kind: str) -> str | None:
    """Why a Hub repository cannot be downloaded (offline, gated, missing, unreachable), or None."""
    if offline():
        return "not in the Hugging Face cache, and HF_HUB_OFFLINE/HF_DATASETS_OFFLINE is set: download it first"
    from huggingface_hub import HfApi
    from huggingface_hub.utils import GatedRepoError, RepositoryNotFoundError

    try:
        getattr(HfApi(), f"{kind}_info")(repo, timeout=15)
    except GatedRepoError:
        return "gated on the Hub: accept its licence there and set HF_TOKEN"
    except RepositoryNotFoundError:
        return f"no such {kind} on the Hub (or it is private: set HF_TOKEN)"
    except Exception as exc:  # noqa: BLE001  (network: one line)
        return f"not cached, and the Hub did not answer: {type(exc).__name__}"
    return None


# --- models: weights, tokenizers, vLLM --------------------------------------------------------------


def model_checks(model: ModelSpec, found: Findings) -> None:
    """Weights and tokenizer of a model (and of its judge and second player) that loads weights itself."""
    refs = [("", model.ref), *((f" ({r})", v) for r, v in (("judge", model.judge), ("player_b", model.player_b)) if v is not None)]
    for role, ref in refs:
        if ref.model not in (None, "hf", "vllm", "hf-auto") or ref.given is None or (model.engine == "api" and not role):
            continue
        args = ref.args
        weights = args.get("pretrained")
        tokenizer = args.get("tokenizer") or weights
        lost = weights and files_problem(str(weights), WEIGHT_FILES, "weights")
        if lost:
            both = "weights and tokenizer" if tokenizer == weights and not args.get("gguf_file") else "weights"
            found.problems.append(f"model {model.name}{role}: {both} {weights}: {lost}")
        if tokenizer and not args.get("gguf_file") and not (lost and tokenizer == weights):
            if problem := files_problem(str(tokenizer), TOKENIZER_FILES, "tokenizer"):
                found.problems.append(f"model {model.name}{role}: tokenizer {tokenizer}: {problem}")
        if not role:
            found.notes.append(tokenizer_note(model.name, tokenizer, args))


def local_files(source: str, patterns: tuple[str, ...]) -> bool | None:
    """Whether ``source`` has files matching ``patterns`` on this machine (a folder, or the Hub cache);
    None when it names a folder that does not exist."""
    folder = Path(source).expanduser()
    if folder.is_dir():
        return any(next(folder.glob(p), None) for p in patterns)
    if source.startswith(("/", ".", "~")):
        return None
    from huggingface_hub import constants

    snapshots = Path(constants.HF_HUB_CACHE) / f"models--{source.replace('/', '--')}" / "snapshots"
    return snapshots.is_dir() and any(next(s.glob(p), None) for s in snapshots.iterdir() for p in patterns)


def files_problem(source: str, patterns: tuple[str, ...], what: str) -> str | None:
    """None when ``source`` (a folder or a Hub id) has ``what`` here (folder, Hub cache) or can download it."""
    here = local_files(source, patterns)
    if here:
        return None
    if here is None:
        return "folder not found"
    if Path(source).expanduser().is_dir():
        return f"the folder has no {what} files ({', '.join(patterns)})"
    return hub_problem(source, "model")


def tokenizer_note(name: str, tokenizer: Any, args: dict[str, Any]) -> str:
    """Which tokenizer ``--dry_run`` counts this model's tokens with (its own when local, else SmolLM2's)."""
    if tokenizer and not args.get("gguf_file") and local_files(str(tokenizer), TOKENIZER_FILES):
        return f"model {name}: token counts in its own tokenizer ({tokenizer})"
    return f"model {name}: token counts in SmolLM2's tokenizer (its own is not on this machine)"


def vllm_check(suite: Suite, found: Findings) -> None:
    served = [m.name for m in suite.models if m.engine == "vllm"]
    if not served:
        return
    try:
        vllm_command()
    except ServerError as exc:
        found.problems.append(f"model{'s' if len(served) > 1 else ''} {', '.join(served)} (engine: vllm): {exc}")


# --- GPUs: count and memory -------------------------------------------------------------------------


def gpu_checks(suite: Suite, executor: str, gpus: list[str], found: Findings) -> None:
    """The GPU count and memory fit of each model: under SLURM on its job's GPUs (the ``slurm:`` block), else on those
    the local pool gives it (:func:`triangulation.suite.gpu_fit.fit_problems`: its ``gpus:``, default 1; the block's
    ``gpus_per_model`` is SLURM's alone)."""
    if executor == "slurm":
        need = {name: job.gpus for name, job in suite.slurm.jobs.items()}
        node = slurm_node_gpus(suite.slurm.partition)
        where = f"partition {suite.slurm.partition or '(default)'}"
        if node is None:
            found.notes.append("GPU count not checked: `sinfo` not found")
        for m in suite.models:
            if node is not None and need[m.name] > node:
                found.problems.append(
                    f"model {m.name} needs {need[m.name]} GPUs, more than one node of {where} has ({node}): a job runs on one node"
                )
    else:
        need = {m.name: m.gpu_count for m in suite.models}
        found.problems += fit_problems(need, gpus) if gpus else []
    memory = slurm_gpu_memory_mib(suite.slurm.partition) if executor == "slurm" else gpu_memory_mib(gpus)
    if executor == "slurm" and not memory:
        found.notes.append("memory fit not checked: the partition's GPU type is not named in `sinfo` (gpu:TYPE:N) or not known here")
        return
    if not memory:
        found.notes.append("memory fit not checked: no `nvidia-smi` answer here (on a CPU machine, or a SLURM login node)")
        return
    per_gpu = min(memory.values())
    for m in (m for m in suite.models if m.gpu_weights):
        if need[m.name] and (problem := memory_problem(m, need[m.name], per_gpu)):
            found.problems.append(problem)
        elif need[m.name] and model_params_b(m) is None:
            found.notes.append(f"model {m.name}: memory fit not checked: its size is unknown here (give `size:`)")


def report(found: Findings, suite: Suite, fatal: bool = False) -> int:
    """Print the notes and problems; 0 when there is none, else 2 (a configuration error). ``fatal``: the preflight
    at the start of a real run, where problems end it in a one-line UserError (exit 2) after they are printed."""
    for note in found.notes:
        print(f"preflight: note: {note}", file=sys.stderr)
    if not found.problems:
        print(f"preflight: {suite.path}: no problem found ({len(suite.models)} models, {len(suite.tasks)} task entries)", file=sys.stderr)
        return 0
    print(f"preflight: {suite.path}: {len(found.problems)} problem(s); nothing was started:", file=sys.stderr)
    for problem in found.problems:
        print(f"  {problem}", file=sys.stderr)
    if fatal:
        raise UserError(f"suite {suite.path}: preflight found {len(found.problems)} problem(s) (listed above); fix them or pass --no_check")
    return 2
