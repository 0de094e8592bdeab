"""File routes: multipart upload stored under generated names, size limit, traversal names refused."""

from __future__ import annotations

import httpx
import pytest

from synth_nb.local import LocalBackend

LINE = b'{"messages": [{"role": "user", "content": "hi"}, {"role": "assistant", "content": "hello"}]}\n'


def test_upload_lookup_list_delete(backend: LocalBackend, client: httpx.Client) -> None:
    response = client.post("/files", files={"file": ("train.jsonl", LINE * 3, "application/jsonl")},
                           data={"purpose": "fine-tune"})
    assert response.status_code == 200
    doc = response.json()
    assert doc["id"].startswith("file_") and doc["bytes"] == len(LINE) * 3
    assert doc["filename"] == "train.jsonl" and doc["purpose"] == "fine-tune" and doc["status"] == "ready"
    assert isinstance(doc["created_at"], int)
    stored = list((backend.data_dir / "files").iterdir())
    assert [p.name for p in stored] == [f"{doc['id']}.bin"] and stored[0].read_bytes() == LINE * 3

    assert client.get(f"/files/{doc['id']}").json()["status"] == "ready"
    listing = client.get("/files", params={"purpose": "fine-tune"}).json()
    assert [f["id"] for f in listing["data"]] == [doc["id"]] and listing["files"] == listing["data"]
    assert client.get("/files", params={"purpose": "other"}).json()["data"] == []
    assert client.delete(f"/files/{doc['id']}").json()["deleted"] is True
    assert client.get(f"/files/{doc['id']}").status_code == 404
    assert not list((backend.data_dir / "files").iterdir())


def test_learning_files_alias(client: httpx.Client) -> None:
    response = client.post("/learning/files", files={"file": ("v.jsonl", LINE)}, data={"purpose": "fine-tune"})
    assert response.status_code == 200 and response.json()["bytes"] == len(LINE)


@pytest.mark.parametrize("name", ["../../etc/passwd", "..", "a/b.jsonl", "..\\x.jsonl", "/abs.jsonl"])
def test_traversal_names_are_refused(backend: LocalBackend, client: httpx.Client, name: str) -> None:
    response = client.post("/files", files={"file": (name, LINE)}, data={"purpose": "fine-tune"})
    assert response.status_code == 400
    assert "plain file name" in response.json()["detail"]
    assert not list((backend.data_dir / "files").iterdir())


def test_oversized_upload_is_413(backend: LocalBackend, client: httpx.Client) -> None:
    big = LINE * (70 * 1024 // len(LINE) + 1)  # the fixture's limit is 64 KiB
    response = client.post("/files", files={"file": ("big.jsonl", big)}, data={"purpose": "fine-tune"})
    assert response.status_code == 413
    assert "limit" in response.json()["detail"]
    assert not list((backend.data_dir / "files").iterdir())


def test_chunked_oversized_upload_is_413_too(backend: LocalBackend, client: httpx.Client) -> None:
    boundary = "xyz"
    payload = (f"--{boundary}\r\nContent-Disposition: form-data; name=\"file\"; filename=\"big.jsonl\"\r\n"
               f"Content-Type: application/jsonl\r\n\r\n").encode() + b"x" * (80 * 1024) + f"\r\n--{boundary}--\r\n".encode()

    def chunks():
        for start in range(0, len(payload), 8192):
            yield payload[start:start + 8192]

    response = client.post("/files", content=chunks(),
                           headers={"Content-Type": f"multipart/form-data; boundary={boundary}"})
    assert response.status_code == 413
    assert not list((backend.data_dir / "files").iterdir())


@pytest.mark.parametrize(("kwargs", "status"), [
    ({"json": {"file": "x"}}, 415),
    ({"data": {"purpose": "fine-tune"}, "files": {"other": ("a.jsonl", LINE)}}, 422),
    ({"content": b"--zz\r\ngarbage", "headers": {"Content-Type": "multipart/form-data; boundary=zz"}}, 422),
    ({"content": b"", "headers": {"Content-Type": "multipart/form-data"}}, 400),
])
def test_malformed_uploads_are_4xx(client: httpx.Client, kwargs: dict[str, object], status: int) -> None:
    response = client.post("/files", **kwargs)  # type: ignore[arg-type]
    assert response.status_code == status, response.text
    assert response.json()["detail"]


def test_unknown_file_is_404(client: httpx.Client) -> None:
    for method in ("GET", "DELETE"):
        response = client.request(method, "/files/file_missing")
        assert response.status_code == 404 and "not found" in response.json()["detail"]


def test_a_retried_upload_with_the_same_idempotency_key_returns_the_first_file(backend: LocalBackend,
                                                                               client: httpx.Client) -> None:
    answers = [client.post("/files", files={"file": ("train.jsonl", LINE)}, data={"purpose": "fine-tune"},
                           headers={"Idempotency-Key": "upload-once"}) for _ in range(9)]
    assert {a.status_code for a in answers} == {200}
    assert len({a.json()["id"] for a in answers}) == 1
    assert len(list((backend.data_dir / "files").iterdir())) == 1
    assert len(client.get("/files").json()["data"]) == 1
    other = client.post("/files", files={"file": ("train.jsonl", LINE)}, data={"purpose": "fine-tune"},
                        headers={"Idempotency-Key": "another-upload"}).json()
    assert other["id"] != answers[0].json()["id"]
    unkeyed = [client.post("/files", files={"file": ("t.jsonl", LINE)}, data={"purpose": "fine-tune"}).json()["id"]
               for _ in range(2)]
    assert len(set(unkeyed)) == 2  # without a key every upload is new


def test_a_failed_upload_does_not_use_up_its_idempotency_key(backend: LocalBackend, client: httpx.Client) -> None:
    big = LINE * (70 * 1024 // len(LINE) + 1)
    headers = {"Idempotency-Key": "retry-after-413"}
    assert client.post("/files", files={"file": ("b.jsonl", big)}, data={"purpose": "fine-tune"},
                       headers=headers).status_code == 413
    retried = client.post("/files", files={"file": ("b.jsonl", LINE)}, data={"purpose": "fine-tune"}, headers=headers)
    assert retried.status_code == 200 and retried.json()["bytes"] == len(LINE)
