"""A LightGBM model file read so that a bad one is one clear error, never a crash of the run.

LightGBM's loader trusts its input: a file cut inside a tree makes it print a ``[Fatal]`` line
per thread, then abort or segfault, and the run dies without a word of feco's. So a model file
is first checked as LightGBM's text format here (the ``tree`` header with its
``feature_names`` and ``tree_sizes``, each tree's block of the size the header gives, the
``end of trees`` line), then loaded once in a short-lived child process whose output is kept
apart; only then is it loaded in the run's own process. What a file is when it is not a model
is said in words: empty, a pickle, binary, another text, cut inside tree N.

The child is this module run as ``python -m feco.ranker.model_file``: the model's bytes on
stdin; exit 0 once LightGBM has loaded them, else LightGBM's reason on stderr.
"""

from __future__ import annotations

import os
import re
import signal
import subprocess
import sys
from pathlib import Path

import lightgbm as lgb

from feco.errors import ConfigError

HEADER_KEYS = ("version", "num_class", "max_feature_idx", "feature_names", "tree_sizes")
# Arrays a tree of n leaves holds per split (n - 1 values) and per leaf (n values).
SPLIT_ARRAYS = ("split_feature", "threshold", "decision_type", "left_child", "right_child")
LEAF_ARRAYS = ("leaf_value",)
END_OF_TREES = b"end of trees"


def load_booster(content: bytes, *, source: str) -> lgb.Booster:
    """The booster in a LightGBM text model's bytes, checked and loaded apart first.

    Raises
    ------
    ConfigError
        ``source`` (the config and the file), then what the bytes are when not a whole model.

    Examples
    --------
    >>> load_booster(b"", source="feco.toml: [ranker.model] file m.txt")
    Traceback (most recent call last):
    feco.errors.ConfigError: feco.toml: [ranker.model] file m.txt: an empty file, not a LightGBM model
    """
    problem = text_problem(content) or _load_apart(content)
    if problem:
        raise ConfigError(f"{source}: {problem}")
    return lgb.Booster(model_str=content.decode("utf-8"))


def text_problem(content: bytes) -> str | None:
    """What keeps ``content`` from being a whole LightGBM text model, or None.

    Examples
    --------
    >>> text_problem(b"hello")
    "not a LightGBM text model: its first line is 'hello', not 'tree'"
    >>> text_problem(b"tree\\nversion=v4\\n\\nTree=0\\n")
    'not a LightGBM text model: its header has no num_class, max_feature_idx, feature_names, tree_sizes'
    """
    if not content.strip():
        return "an empty file, not a LightGBM model" if not content else "only blanks, not a LightGBM model"
    if re.match(rb"\x80[\x02-\x05]", content):
        return ("a pickle (as pickle and joblib write), not a LightGBM text model: unpickling runs code from the "
                "file, so feco does not; write the model with booster.save_model(path)")
    try:
        content.decode("utf-8")
    except UnicodeDecodeError as error:
        return f"binary, not a LightGBM text model (byte {error.start} is 0x{content[error.start]:02x}, not text)"
    header, blank, _ = content.partition(b"\n\n")
    lines = header.decode("utf-8").splitlines()
    if lines[0].strip() != "tree":
        return f"not a LightGBM text model: its first line is {_shown(lines[0])}, not 'tree'"
    if not blank:
        return "cut inside its header: the file ends before its first tree"
    keys = dict(line.split("=", 1) for line in lines[1:] if "=" in line)
    missing = [key for key in HEADER_KEYS if key not in keys]
    if missing:
        return f"not a LightGBM text model: its header has no {', '.join(missing)}"
    return _header_problem(keys) or _trees_problem(content, start=len(header) + 2, keys=keys)


def _header_problem(keys: dict[str, str]) -> str | None:
    try:
        features, sizes = int(keys["max_feature_idx"]) + 1, [int(size) for size in keys["tree_sizes"].split()]
    except ValueError:
        return "not a LightGBM text model: its max_feature_idx or tree_sizes is not whole numbers"
    if len(keys["feature_names"].split()) != features or min(sizes, default=1) < 1:
        return (f"not a LightGBM text model: its header names {len(keys['feature_names'].split())} features for "
                f"max_feature_idx {features - 1}, or gives a tree no size")
    return None


def _trees_problem(content: bytes, *, start: int, keys: dict[str, str]) -> str | None:
    """Each tree where ``tree_sizes`` puts it, whole, then ``end of trees``."""
    sizes = [int(size) for size in keys["tree_sizes"].split()]
    features = int(keys["max_feature_idx"]) + 1
    at = start
    for index, size in enumerate(sizes):
        block = content[at:at + size]
        if len(block) < size:
            return f"cut inside tree {index} (of {len(sizes)}): the file ends before the tree does"
        if not block.startswith(f"Tree={index}\n".encode()):
            return f"not a LightGBM text model: tree {index} is not where its header's tree_sizes puts it"
        problem = _tree_problem(block.decode("utf-8"), features=features)
        if problem:
            return f"not a LightGBM text model: tree {index} {problem}"
        at += size
    if not content[at:].startswith(END_OF_TREES):
        if not content[at:].strip():
            return f"cut after tree {len(sizes) - 1}: the file ends before 'end of trees'"
        return f"not a LightGBM text model: its {len(sizes)} trees are not followed by 'end of trees'"
    rest = content[at:]
    if b"\nparameters:\n" in rest and b"\nend of parameters" not in rest:
        return "cut inside its parameters: the file ends before 'end of parameters'"
    return None


def _tree_problem(block: str, *, features: int) -> str | None:
    """What in one tree's block would make LightGBM read past its arrays, or None."""
    keys = dict(line.split("=", 1) for line in block.splitlines() if "=" in line)
    try:
        leaves = int(keys["num_leaves"])
        names = LEAF_ARRAYS + (SPLIT_ARRAYS if leaves > 1 else ())
        arrays = {name: [float(v) for v in keys[name].split()] for name in names}
    except (KeyError, ValueError) as error:
        return f"lacks {error} or holds a value that is not a number"
    if leaves < 1:
        return "has no leaf"
    wrong = [name for name, values in arrays.items() if len(values) != (leaves if name in LEAF_ARRAYS else leaves - 1)]
    if wrong:
        return f"of {leaves} leaves has {', '.join(wrong)} of another length"
    children = arrays.get("left_child", []) + arrays.get("right_child", [])
    if any(not 0 <= f < features for f in arrays.get("split_feature", [])) or any(
            not -leaves <= c < leaves - 1 for c in children):
        return "splits on a feature or leads to a node it does not have"
    return None


def _load_apart(content: bytes) -> str | None:
    """Load the model in a child process: LightGBM's reason when it cannot (or its crash), else None."""
    # -P and PYTHONPATH: the child imports this very feco, never one in the current folder
    package_root = str(Path(__file__).resolve().parents[2])
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(filter(None, [package_root, os.environ.get("PYTHONPATH")]))}
    child = subprocess.run([sys.executable, "-P", "-m", "feco.ranker.model_file"], input=content,
                           capture_output=True, env=env, check=False)
    if child.returncode == 0:
        return None
    said = [line.split("[Fatal]", 1)[1].strip() for line in child.stderr.decode(errors="replace").splitlines()
            if "[Fatal]" in line] or ["it gave no reason"]
    reason = "".join(c if c.isprintable() else "?" for c in said[0][:120])  # it may quote the file's bytes
    ending = (f"signal {-child.returncode} ({signal.Signals(-child.returncode).name})" if child.returncode < 0
              else f"exit status {child.returncode}")
    return f"LightGBM cannot load it: {reason} (its loader ended with {ending})"


def _shown(line: str) -> str:
    return repr(line[:40] + ("…" if len(line) > 40 else ""))


def _serve() -> None:
    """The child: load the model on stdin; LightGBM's own output, all of it, goes to stderr."""
    content = sys.stdin.buffer.read()
    os.dup2(2, 1)  # LightGBM prints through C's stdout and Python's: both to the parent's pipe,
    sys.stdout = sys.stderr  # unbuffered, so what it said before a crash is not lost
    lgb.Booster(model_str=content.decode("utf-8"))


if __name__ == "__main__":
    _serve()
