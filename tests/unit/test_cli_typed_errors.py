"""Issue 48.5: CLI inputs that ended in the catch-all "unexpected … please report it" (exit 1)
are the user's mistakes: each now gets one typed ``error:`` line saying what to do, exit 2."""

from __future__ import annotations

import pytest

from probing.cli.main import main as cli

CASES: dict[str, tuple[list[str], str]] = {
    "unknown data set (cka)": (
        ["cka", "--dataset", "../../etc/passwd", "--n-words", "50"],
        # a setting of the analysis registry: refused while parsing, with the choices
        "argument --dataset: invalid choice: '../../etc/passwd' (choose from 'ud-ewt',",
    ),
    "unknown data set (attention-norms)": (
        ["attention-norms", "--dataset", "../../etc/passwd", "--n-sentences", "2"],
        "argument --dataset: invalid choice: '../../etc/passwd'",
    ),
    "unknown data set (train-tuned-lens)": (
        ["train-tuned-lens", "--model", "minilm-l6-mlm", "--train-dataset", "../../etc/passwd"],
        "Unknown data set '../../etc/passwd'",
    ),
    "a lexicon for sentences (cka)": (
        ["cka", "--dataset", "wordnet", "--n-words", "50"],
        "argument --dataset: invalid choice: 'wordnet' (choose from 'ud-ewt', 'semcor', 'brown')",
    ),
    "a lexicon for sentences (train-tuned-lens)": (
        ["train-tuned-lens", "--model", "minilm-l6-mlm", "--eval-dataset", "wordnet"],
        "is a lexicon",
    ),
    "--write-card without a training log (train-elmo)": (
        ["train-elmo", "--write-card", "{tmp}"],
        "lacks training_log.json, options.json, weights.hdf5",
    ),
    "--write-card without a training log (train-mlm-head)": (
        ["train-mlm-head", "--write-card", "{tmp}"],
        "lacks training_log.json: --write-card rewrites the card",
    ),
    "--write-card on a file": (
        ["train-mlm-head", "--write-card", "{tmp}/file.txt"],
        "is not a folder",
    ),
    "--write-card on a missing folder": (
        ["train-elmo", "--write-card", "{tmp}/missing"],
        "is not a folder",
    ),
    "train-elmo-softmax on a folder without ELMo-mini": (
        ["train-elmo-softmax", "--export-dir", "{tmp}", "--work-dir", "{tmp}/work"],
        "holds no ELMo-mini export",
    ),
    "an output folder under a missing parent": (
        ["contextuality", "--model", "minilm-l6", "--n-sentences", "5", "--out", "/proc/no/x"],
        "No such file or directory; check the path",
    ),
    "an output folder that is a file": (
        ["contextuality", "--model", "minilm-l6", "--n-sentences", "5", "--out", "{tmp}/file.txt"],
        "a file is in the way",
    ),
    "a minimum count no word type reaches": (
        ["contextuality", "--model", "minilm-l6", "--n-sentences", "2", "--min-count", "1000"],
        "no word type occurs 1000 or more times in the sample",
    ),
}


@pytest.mark.parametrize("case", list(CASES))
def test_a_bad_input_gets_a_typed_line_and_exit_2(case, tmp_path, capsys, monkeypatch):
    argv, said = CASES[case]
    monkeypatch.chdir(tmp_path)  # default output folders land here, not in the checkout
    (tmp_path / "file.txt").write_text("x", encoding="utf-8")
    argv = [a.replace("{tmp}", str(tmp_path)) for a in argv]
    if argv[0] in {"cka", "attention-norms", "train-tuned-lens"}:
        argv += ["--out", str(tmp_path / "out")]
    try:
        code = cli(argv)
    except SystemExit as exc:  # refused while parsing (argparse exits with status 2)
        code = exc.code
    err = capsys.readouterr().err
    assert code == 2, err
    line = err.strip().splitlines()[-1]
    assert line.startswith("error: ") or "error: " in line, err
    assert "unexpected" not in err and "report it" not in err and "Traceback" not in err
    assert "Errno" not in err and "Error:" not in line.split("error: ", 1)[1]
    assert said in err
