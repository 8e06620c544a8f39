"""fetch_elmo against a local HTTP server serving the AllenNLP fixture under registry names."""

from __future__ import annotations

import functools
import http.server
import shutil
import threading
from collections.abc import Iterator
from dataclasses import replace
from pathlib import Path

import numpy as np
import pytest

from probing.encoders.elmo import load_elmo
from probing.errors import ModelUnavailableError, UnknownModelError
from probing.models import elmo_download
from probing.models.elmo_download import ELMO_MODELS, fetch_elmo, is_cached, model_dir

from .test_elmo import FILES

NAME = "elmo-small"
SPEC = ELMO_MODELS[NAME]


class _Handler(http.server.SimpleHTTPRequestHandler):
    """Serves a folder; counts requests; ``truncate`` paths advertise more bytes than sent."""

    requests: list[str]
    truncate: set[str]

    def do_GET(self) -> None:  # http.server API
        self.requests.append(self.path)
        if self.path.lstrip("/") in self.truncate:
            data = (Path(self.directory) / self.path.lstrip("/")).read_bytes()
            self.send_response(200)
            self.send_header("Content-Length", str(len(data)))
            self.end_headers()
            self.wfile.write(data[: len(data) // 2])  # then the connection closes
            self.close_connection = True
            return
        super().do_GET()

    def log_message(self, *args: object) -> None:  # keep test output quiet
        pass


class Server:
    def __init__(self, root: Path) -> None:
        self.requests: list[str] = []
        self.truncate: set[str] = set()
        handler = type("H", (_Handler,), {"requests": self.requests, "truncate": self.truncate})
        self.httpd = http.server.ThreadingHTTPServer(
            ("127.0.0.1", 0), functools.partial(handler, directory=str(root))
        )
        self.url = f"http://127.0.0.1:{self.httpd.server_address[1]}"
        self.thread = threading.Thread(target=self.httpd.serve_forever, daemon=True)
        self.thread.start()

    def stop(self) -> None:
        self.httpd.shutdown()
        self.httpd.server_close()


@pytest.fixture
def server(tmp_path, monkeypatch) -> Iterator[Server]:
    """The fixture's options + weights under elmo-small's canonical relative paths."""
    root = tmp_path / "www"
    for src, rel in ((FILES[0], SPEC.options_path), (FILES[1], SPEC.weights_path)):
        (root / rel).parent.mkdir(parents=True, exist_ok=True)
        shutil.copy(src, root / rel)
    monkeypatch.setenv("CONTEXTLENS_CACHE_DIR", str(tmp_path / "cache"))
    srv = Server(root)
    monkeypatch.setenv("CONTEXTLENS_ELMO_BASE_URL", srv.url)
    yield srv
    srv.stop()


def test_registry_has_the_three_published_models():
    assert list(ELMO_MODELS) == ["elmo-small", "elmo-medium", "elmo-original"]
    base = "https://s3-us-west-2.amazonaws.com/allennlp/models/elmo/"
    assert ELMO_MODELS["elmo-original"].weights_url == (
        base + "2x4096_512_2048cnn_2xhighway/elmo_2x4096_512_2048cnn_2xhighway_weights.hdf5"
    )
    assert ELMO_MODELS["elmo-small"].options_url == (
        base + "2x1024_128_2048cnn_1xhighway/elmo_2x1024_128_2048cnn_1xhighway_options.json"
    )
    assert ELMO_MODELS["elmo-medium"].weights_path.startswith("2x2048_256_2048cnn_1xhighway/")
    assert all("1 Billion Word" in s.provenance for s in ELMO_MODELS.values())


def test_fetch_downloads_then_hits_the_cache(server, tmp_path):
    calls: list[tuple[int, int | None]] = []
    folder = fetch_elmo(NAME, progress=lambda done, total: calls.append((done, total)))
    assert folder == tmp_path / "cache" / "models" / NAME == model_dir(NAME)
    assert sorted(p.name for p in folder.iterdir()) == ["options.json", "weights.hdf5"]
    assert (folder / "weights.hdf5").read_bytes() == FILES[1].read_bytes()
    assert calls and calls[-1][0] == calls[-1][1]  # progress reached the total
    assert max(done for done, _ in calls) == FILES[1].stat().st_size
    assert len(server.requests) == 2 and is_cached(NAME)

    enc = load_elmo(folder, name=NAME, provenance=SPEC.provenance)
    (e,) = enc.encode("The bank by the river.")
    assert e.layers.shape == (3, 6, 32) and np.isfinite(e.layers).all()
    assert enc.info.provenance == SPEC.provenance

    server.stop()  # a second call must not touch the network at all
    assert fetch_elmo(NAME) == folder
    assert len(server.requests) == 2


def test_truncated_transfer_is_rejected_and_leaves_no_file(server, tmp_path):
    server.truncate.add(SPEC.weights_path)
    with pytest.raises(ModelUnavailableError) as info:
        fetch_elmo(NAME)
    folder = tmp_path / "cache" / "models" / NAME
    assert not folder.exists() or list(folder.iterdir()) == []
    assert not is_cached(NAME)
    # The message says what to download and where to put it.
    assert SPEC.weights_path in str(info.value) and str(folder / "weights.hdf5") in str(info.value)


def test_wrong_size_is_rejected_and_leaves_no_file(server, tmp_path, monkeypatch):
    wrong = replace(SPEC, weights_size=FILES[1].stat().st_size + 1)
    monkeypatch.setitem(elmo_download.ELMO_MODELS, NAME, wrong)
    with pytest.raises(ModelUnavailableError, match="expected"):
        fetch_elmo(NAME)
    folder = tmp_path / "cache" / "models" / NAME
    assert not folder.exists() or list(folder.iterdir()) == []


def test_offline_error_says_what_to_download_and_where(tmp_path, monkeypatch):
    monkeypatch.setenv("CONTEXTLENS_CACHE_DIR", str(tmp_path / "cache"))
    srv = Server(tmp_path)  # take a free port, then close it: nothing listens there
    url = srv.url
    srv.stop()
    with pytest.raises(ModelUnavailableError) as info:
        fetch_elmo("elmo-original", base_url=url)
    msg = str(info.value)
    spec = ELMO_MODELS["elmo-original"]
    assert f"{url}/{spec.options_path}" in msg and f"{url}/{spec.weights_path}" in msg
    assert str(tmp_path / "cache" / "models" / "elmo-original") in msg
    assert "pass that folder" in msg


def test_argument_overrides_env_base_url(server, monkeypatch):
    monkeypatch.setenv("CONTEXTLENS_ELMO_BASE_URL", "http://127.0.0.1:9/nothing-here")
    assert (fetch_elmo(NAME, base_url=server.url) / "weights.hdf5").is_file()


def test_unknown_name():
    with pytest.raises(UnknownModelError):
        fetch_elmo("elmo-huge")
