"""tests/local_server.py: the real llama_cpp.server comes up on 127.0.0.1, answers an OpenAI-compatible request,
and is stopped when the context ends, also when the body raises."""

import json
import urllib.error
import urllib.request

import pytest

from tests.local_server import _answers, local_server, llama_server  # noqa: F401 (the fixture)

# the real library's server (make local): `make test-long`; make test covers the protocol over fakes
# (tests/launchers/test_api_samplers.py)
pytestmark = [pytest.mark.long, pytest.mark.xdist_group("llama")]


def test_the_server_answers_on_loopback_and_reports_its_model(llama_server):  # noqa: F811
    assert llama_server.base_url == f"http://127.0.0.1:{llama_server.port}/v1"
    with urllib.request.urlopen(llama_server.base_url + "/models", timeout=10) as resp:
        ids = [m["id"] for m in json.loads(resp.read())["data"]]
    assert ids == ["SmolLM2-135M-Instruct.Q4_1"] == [llama_server.model]


def test_the_server_is_stopped_when_the_body_raises():
    pytest.importorskip("llama_cpp.server")
    with pytest.raises(ZeroDivisionError):
        with local_server() as server:
            assert _answers(server.base_url)
            1 / 0
    assert server.process.poll() is not None
    assert not _answers(server.base_url, timeout=1)


def test_a_server_with_a_key_refuses_a_request_without_it():
    pytest.importorskip("llama_cpp.server")
    with local_server(api_key="sk-local-test") as server:
        req = urllib.request.Request(
            server.base_url + "/chat/completions",
            method="POST",
            data=b'{"model": "x", "messages": [{"role": "user", "content": "hi"}]}',
            headers={"Content-Type": "application/json"},
        )
        with pytest.raises(urllib.error.HTTPError) as err:
            urllib.request.urlopen(req, timeout=30)
        assert err.value.code == 401
        err.value.close()  # the refused response's socket
