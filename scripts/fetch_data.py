"""`make data`: the public datasets feco's tests, benchmarks and experiments read, fetched from
their official sources and checked against the sha256 of every file.

    python3 scripts/fetch_data.py                 # fetch what is missing into ../shared/data, check all
    python3 scripts/fetch_data.py --check         # check the files present; fetch nothing
    python3 scripts/fetch_data.py --root DIR      # another place (default: ../shared/data beside the repo)
    python3 scripts/fetch_data.py --downloads DIR # downloads saved by hand (LETOR's .rar files) are taken from DIR
    python3 scripts/fetch_data.py --only ltr/mq2008   # the files under one folder

Where each file comes from, its licence and citation: docs/data.md. LETOR 4.0 ships as RAR
archives: unpacking them needs `bsdtar` (Debian: libarchive-tools), `unrar` or `7z`. Microsoft
moved LETOR's downloads to OneDrive links on the project page; when its old address no longer
answers, save MQ2008.rar and MQ2007-agg.rar from that page into a folder and pass it as
--downloads. A file already present is only checked; a file that fails its check is reported,
never overwritten. Standard library only: it runs before the project is installed.
"""

from __future__ import annotations

import argparse
import hashlib
import shutil
import subprocess
import sys
import tempfile
import urllib.request
import zipfile
from dataclasses import dataclass
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
DEFAULT_ROOT = REPO.parent / "shared" / "data"  # where feco.paper.datasets.default_root reads them
LETOR = "https://www.microsoft.com/en-us/research/project/letor-learning-rank-information-retrieval/letor-4-0/"
LETOR_DATA = "https://research.microsoft.com/en-us/um/beijing/projects/letor/LETOR4.0/Data/"
WEBIS = "https://github.com/webis-de/sigir20-sampling-bias-due-to-near-duplicates-in-learning-to-rank/raw/"
FASTRANK = "https://raw.githubusercontent.com/jjfiv/fastrank/"
GROUPLENS = "https://files.grouplens.org/datasets/movielens/"


@dataclass(frozen=True)
class Download:
    """One file to download: a dataset file itself, or an archive holding several."""

    name: str  # its file name among the downloads (and in --downloads)
    url: str
    page: str  # where a person finds it when the url moves


# The LETOR 4.0 page's 5-fold map of MQ2008's partitions (the loaders read the same map).
MQ2008_FOLDS = ("Fold\tTraining.txt\tValidation.txt Test.txt\t\n" + "".join(
    f"Fold{k + 1}\t{', '.join(f'S{(k + i) % 5 + 1}' for i in range(3))}\tS{(k + 3) % 5 + 1}\t\tS{(k + 4) % 5 + 1}\t\n"
    for k in range(5)))

MQ2008 = Download("MQ2008.rar", LETOR_DATA + "MQ2008.rar", LETOR)
MQ2007_AGG = Download("MQ2007-agg.rar", LETOR_DATA + "MQ2007-agg.rar", LETOR)
MOVIELENS = Download("ml-latest-small.zip", GROUPLENS + "ml-latest-small.zip",
                     "https://grouplens.org/datasets/movielens/")


def _webis(name: str, commit: str, path: str) -> Download:
    return Download(name, f"{WEBIS}{commit}/{path}",
                    "https://github.com/webis-de/sigir20-sampling-bias-due-to-near-duplicates-in-learning-to-rank")


def _fastrank(name: str, commit: str) -> Download:
    return Download(name, f"{FASTRANK}{commit}/examples/{name}", "https://github.com/jjfiv/fastrank/tree/main/examples")


WEBIS_FOLDS = {1: "55ed9db8bb930c36d0c4c61c192f4ce242c2ff6a", 2: "55ed9db8bb930c36d0c4c61c192f4ce242c2ff6a",
               3: "100f0c085053e4300452932f7ab37154440dc6c0", 4: "55ed9db8bb930c36d0c4c61c192f4ce242c2ff6a",
               5: "55ed9db8bb930c36d0c4c61c192f4ce242c2ff6a"}
WEBIS_SUMS = {1: "ab05f742d7bf680db38f39d485788ccefc46ca5f9c450058adcf1b21cb2ed6eb",
              2: "882c9e3d0145608d906b25acccdc8cb1760faca6c13afbd86096b24bd9748680",
              3: "3598b6f1ff411e6fd5572e6bac392efc6814614fec68d881c1e4b5edaeb03c5d",
              4: "cdfa2d696b5bda4dfe27dfbba432e9dff2a481507736af594824881127cd4377",
              5: "a2db821816295163492ddeb9ef94a05bb80cb68c195a5e783167f65960ab03fb"}

# Every file, relative to the root: (its sha256, the download it comes from, its name inside an
# archive; None: the download is the file). A member is found by name anywhere in the archive.
FILES: dict[str, tuple[str, Download | None, str | None]] = {
    **{f"ltr/mq2008/S{i}.txt": (sha, MQ2008, f"S{i}.txt") for i, sha in enumerate((
        "cbd42504549a2388f6c0aefdb506f22074225b574c7a5df10194174c9b00e4e0",
        "055ac792cb8f7d5a029090b8acbfb6c57323339d1371251bf2465ac182aa8605",
        "a03fe2b6e76479de60fecdb37d560a40a4e899b0cd685553d2da31ea205af1ab",
        "a239850bc6fe960ad08c2b7b0d99db90fe976dd93a15358e98036591b4e7a2ac",
        "c68c52feb1ecae7f17b64c8e2fda2098302681bbd4ea5fad8c73a1d32a1cf2b2"), start=1)},
    "ltr/mq2008/readme.txt": ("c9605c506278100f54880e01f060cd505a255dc66498ca67f64dfa823a72bd24", None, None),
    **{f"ltr/mq2007_agg/S{i}.txt": (sha, MQ2007_AGG, f"S{i}.txt") for i, sha in enumerate((
        "4ed2be97ee9e5e3f3f7e2368de35e710eca03a2076e927c71efc340fa2c663e6",
        "bbef3aacba93d042c9d26d554f52503168019f69d7c6bed2453aa3322972b1d5",
        "611b2623644ed1c5a3e813005fe70d56d6d348dcbe7bcb323b331556eede1268",
        "c3c14a6a796e54cef669beb98c6c2ef088f312e751d351d32c9ae3ec74f61030",
        "9789ba66656fda2ca4ce61c5b55ea08833b51e0c25e2d914732ad880c6d6e562"), start=1)},
    **{f"ltr/webis_clueweb09/fold{i}.test.txt": (
        WEBIS_SUMS[i], _webis(f"webis-fold{i}.test.txt", commit, f"data/features/ClueWeb09/Fold{i}/test.txt"), None)
       for i, commit in WEBIS_FOLDS.items()},
    "ltr/webis_clueweb09/README.md": ("a7c40e152428c70a44a95f2b53bb10b6027f152c41dcf2ef2f969ada992fff26", _webis(
        "webis-README.md", "2d42cfd5660ca7e9f083d00636854e4453c95c20", "data/features/README.md"), None),
    "ltr/webis_clueweb09/CODE_LICENSE_MIT": ("fb1763b194364d4328ead5d90a20f889d6aab26ad5ea7655c559f7cd0860fd4f", _webis(
        "webis-LICENSE", "304d53c8115408258dc57b32f83042281d9ce9aa", "LICENSE"), None),
    "ltr/trec_news_2018/trec_news_2018.train": (
        "38898cd36859bc9b9c810a7a32a7406d156c3783798c60cb9386d1239c02f210",
        _fastrank("trec_news_2018.train", "466b169b9e8cb918306d399e2fb5271e17e2a349"), None),
    "ltr/trec_news_2018/trec_news_2018.test": (
        "a3951a744b8a723a459f5fe4f787f8f8e75e9eb35c8fd024c35256dc6a03bbfb",
        _fastrank("trec_news_2018.test", "466b169b9e8cb918306d399e2fb5271e17e2a349"), None),
    "ltr/trec_news_2018/trec_news_2018.features.json": (
        "7927126769dea85f1005b43ad21ab542eff288631e1d82ea2a1344273c138622",
        _fastrank("trec_news_2018.features.json", "666b05d66b7e51643a7018631fdc210f5e4f6aa6"), None),
    "ltr/trec_news_2018/newsir18-entity.qrel": (
        "f2d438ec708a925c937157315c41a2a982d627e7d06f15bb37e5cdfcd3a1093a",
        _fastrank("newsir18-entity.qrel", "072ff4b461de07a49361b7559a04d8b75ec3c878"), None),
    "interactions/movielens_latest_small/ratings.csv": (
        "aa289ca83157595d0df6aea1be6a4ded676ddc4385472e8313a8ed9805352646", MOVIELENS, "ratings.csv"),
    "interactions/movielens_latest_small/movies.csv": (
        "5a5f32dd9bb3797b8e728a1b98958789d2b13f294a69fdfbc5727f8a9611aa07", MOVIELENS, "movies.csv"),
    "interactions/movielens_latest_small/README.txt": (
        "caa1eb1d1d113578e9dbb36b37398404e00f379492b7aa31df0b30c855017095", MOVIELENS, "README.txt"),
}
WRITTEN = {"ltr/mq2008/readme.txt": MQ2008_FOLDS}  # small files the script writes itself


class Refused(Exception):
    """One line saying what went wrong with which file and what to do."""


def sha256(path: Path) -> str:
    digest = hashlib.sha256()
    with path.open("rb") as stream:
        while chunk := stream.read(1 << 20):  # streamed: a file need not fit in memory
            digest.update(chunk)
    return digest.hexdigest()


def check(root: Path, name: str) -> str | None:
    """None when ``root/name`` is there with its sha256, else the line saying what is wrong."""
    path = root / name
    if not path.is_file():
        return f"{name}: missing from {root} (`make data` fetches it)"
    found = sha256(path)
    if found != FILES[name][0]:
        return (f"{name}: sha256 {found[:12]}… is not the published file's {FILES[name][0][:12]}… "
                "(a partial or other copy: delete it and run `make data`)")
    return None


def fetch(root: Path, names: list[str], downloads: Path, *, saved: Path | None) -> list[str]:
    """Fetch the missing ``names`` into ``root``; the lines of the files that could not be fetched."""
    problems = []
    for download in dict.fromkeys(FILES[name][1] for name in names if FILES[name][1] is not None):
        wanted = [name for name in names if FILES[name][1] == download]
        try:
            source = _obtain(download, downloads, saved=saved)
            for name in wanted:
                _place(root, name, source, downloads)
        except Refused as error:
            problems += [f"{name}: {error}" for name in wanted]
    for name in names:
        if name in WRITTEN:
            (root / name).parent.mkdir(parents=True, exist_ok=True)
            (root / name).write_bytes(WRITTEN[name].encode())
    return problems


def _obtain(download: Download, downloads: Path, *, saved: Path | None) -> Path:
    """The downloaded file: from ``saved`` when it holds one by that name, else from its url."""
    if saved is not None and (saved / download.name).is_file():
        return saved / download.name
    target = downloads / download.name
    print(f"downloading {download.url}", flush=True)
    try:
        with urllib.request.urlopen(download.url, timeout=60) as answer, target.open("wb") as out:
            shutil.copyfileobj(answer, out, 1 << 20)
    except OSError as error:  # URLError, HTTPError and time-outs are OSErrors
        raise Refused(f"cannot download {download.url} ({error}); get {download.name} from {download.page} "
                      "into a folder and pass it as --downloads") from None
    return target


def _place(root: Path, name: str, source: Path, downloads: Path) -> None:
    """Put ``name`` under ``root`` from its download (the file, or a member of the archive),
    once its sha256 is the published file's; written beside it first, then renamed."""
    expected, download, member = FILES[name]
    if member is not None:
        source = _member(source, member, expected, downloads / (download.name + ".d"))
    elif sha256(source) != expected:
        raise Refused(f"{download.name} from {download.url} is not the published file "
                      f"(sha256 {sha256(source)[:12]}…)")
    path = root / name
    path.parent.mkdir(parents=True, exist_ok=True)
    staged = path.with_name(path.name + ".part")
    shutil.copyfile(source, staged)
    staged.replace(path)


def _member(archive: Path, member: str, expected: str, folder: Path) -> Path:
    """The archive's file named ``member`` whose sha256 is ``expected`` (the folders inside an
    archive differ between its editions; the checksum says which file is meant)."""
    if not folder.exists():
        folder.mkdir(parents=True)
        _unpack(archive, folder)
    for candidate in sorted(folder.rglob(member)):
        if candidate.is_file() and sha256(candidate) == expected:
            return candidate
    raise Refused(f"{archive.name} holds no {member} with the published sha256 {expected[:12]}…")


def _unpack(archive: Path, folder: Path) -> None:
    if archive.suffix == ".zip":
        with zipfile.ZipFile(archive) as zipped:
            zipped.extractall(folder)
        return
    tools = {"bsdtar": ["bsdtar", "-xf", str(archive), "-C", str(folder)],
             "unrar": ["unrar", "x", "-idq", "-o+", str(archive), str(folder) + "/"],
             "7z": ["7z", "x", "-y", f"-o{folder}", str(archive)]}
    tool = next((name for name in tools if shutil.which(name)), None)
    if tool is None:
        raise Refused(f"unpacking {archive.name} needs bsdtar (Debian: apt-get install libarchive-tools), unrar or 7z")
    done = subprocess.run(tools[tool], capture_output=True, text=True, check=False)
    if done.returncode:
        raise Refused(f"{tool} could not unpack {archive.name}: {(done.stderr or done.stdout).strip()[:200]}")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description="Fetch the public datasets from their official sources "
                                                 "and check every file's sha256 (docs/data.md).")
    parser.add_argument("--root", type=Path, default=DEFAULT_ROOT, help=f"where they go (default {DEFAULT_ROOT})")
    parser.add_argument("--check", action="store_true", help="only check the files present; fetch nothing")
    parser.add_argument("--downloads", type=Path, help="a folder of downloads saved by hand, used before the network")
    parser.add_argument("--only", metavar="FOLDER", help="only the files under this folder of the root (ltr/mq2008)")
    args = parser.parse_args(argv)
    names = [name for name in FILES if not args.only or name.startswith(args.only.rstrip("/") + "/")]
    if not names:
        parser.error(f"--only {args.only}: no dataset file under it (folders: ltr/…, interactions/…)")
    missing = [name for name in names if not (args.root / name).is_file()]
    problems = []
    if missing and not args.check:
        with tempfile.TemporaryDirectory(prefix="feco-data-") as downloads:
            problems = fetch(args.root, missing, Path(downloads), saved=args.downloads)
    failed = {line.split(":", 1)[0] for line in problems}
    problems += [line for name in names if name not in failed and (line := check(args.root, name))]
    for line in problems:
        print(line, file=sys.stderr)
    if problems:
        print(f"{len(problems)} of {len(names)} dataset files not in place under {args.root}", file=sys.stderr)
        return 1
    print(f"{len(names)} dataset files in place under {args.root}, each with its published sha256")
    return 0


if __name__ == "__main__":
    sys.exit(main())
