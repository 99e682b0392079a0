"""MNIST: IDX parsing, the train/test datasets, downloads (never over the network here) and file errors."""

from __future__ import annotations

import gzip
import io
import struct
import urllib.error
import urllib.request
from pathlib import Path

import numpy as np
import numpy.typing as npt
import pytest
from ferrum.data.dataset.vision import MNIST_MIRROR, MnistDataset, MnistItem, download_file, read_idx

TRAIN = ("train-images-idx3-ubyte", "train-labels-idx1-ubyte")
TEST = ("t10k-images-idx3-ubyte", "t10k-labels-idx1-ubyte")


def idx_bytes(array: npt.NDArray[np.generic], code: int = 0x08) -> bytes:
    """IDX bytes built from the format description: 0, 0, type code, rank, big-endian sizes, data."""
    header = bytes([0, 0, code, array.ndim]) + b"".join(struct.pack(">I", n) for n in array.shape)
    return header + array.astype(array.dtype.newbyteorder(">")).tobytes()


def write_idx(path: Path, array: npt.NDArray[np.generic], *, gz: bool = False) -> Path:
    data = idx_bytes(array)
    if gz:
        path = path.with_name(path.name + ".gz")
        path.write_bytes(gzip.compress(data))
    else:
        path.write_bytes(data)
    return path


def digits(n: int, seed: int) -> tuple[npt.NDArray[np.uint8], npt.NDArray[np.uint8]]:
    rng = np.random.default_rng(seed)
    return rng.integers(0, 256, (n, 28, 28), dtype=np.uint8), rng.integers(0, 10, n, dtype=np.uint8)


def write_split(root: Path, names: tuple[str, str], n: int, seed: int, *, gz: bool = False) -> None:
    images, labels = digits(n, seed)
    write_idx(root / names[0], images, gz=gz)
    write_idx(root / names[1], labels, gz=gz)


def test_train_reads_plain_idx_files(tmp_path: Path) -> None:
    write_split(tmp_path, TRAIN, 5, seed=0)
    images, labels = digits(5, seed=0)
    train = MnistDataset.train(tmp_path, download=False)
    assert len(train) == 5
    for i, item in enumerate(train):
        assert item.image.shape == (28, 28) and item.image.dtype == np.uint8
        np.testing.assert_array_equal(item.image, images[i])
        assert item.label == int(labels[i]) and type(item.label) is int
    assert train.get(5) is None and train.get(-1) is None


def test_test_reads_gzipped_idx_files_and_items_compare_by_value(tmp_path: Path) -> None:
    write_split(tmp_path, TEST, 3, seed=1, gz=True)
    images, labels = digits(3, seed=1)
    test = MnistDataset.test(str(tmp_path), download=False)
    assert len(test) == 3
    assert test[2] == MnistItem(images[2].copy(), int(labels[2]))
    assert test[2] != MnistItem(images[2].copy(), (int(labels[2]) + 1) % 10)
    assert test[0] != "not an item"


def test_images_are_read_only_views(tmp_path: Path) -> None:
    write_split(tmp_path, TRAIN, 2, seed=2)
    image = MnistDataset.train(tmp_path, download=False)[0].image
    with pytest.raises(ValueError, match="read-only"):
        image[0, 0] = 1


def test_missing_files_are_downloaded_with_the_injected_downloader(tmp_path: Path) -> None:
    root = tmp_path / "cache" / "mnist"
    images, labels = digits(4, seed=3)
    payloads = {TEST[0]: gzip.compress(idx_bytes(images)), TEST[1]: gzip.compress(idx_bytes(labels))}
    calls: list[tuple[str, Path]] = []

    def fake_download(url: str, destination: Path) -> None:
        calls.append((url, destination))
        destination.write_bytes(payloads[url.rsplit("/", 1)[1].removesuffix(".gz")])

    test = MnistDataset.test(root, downloader=fake_download)
    assert calls == [(MNIST_MIRROR + name + ".gz", root / f"{name}.gz") for name in TEST]
    assert len(test) == 4 and test[3].label == int(labels[3])
    # Once present, the files are read, not fetched again.
    MnistDataset.test(root, downloader=fake_download)
    assert len(calls) == 2


def test_only_the_missing_file_is_downloaded_from_a_custom_mirror(tmp_path: Path) -> None:
    write_split(tmp_path, TRAIN, 2, seed=4)
    (tmp_path / TRAIN[1]).unlink()
    _, labels = digits(2, seed=4)
    urls: list[str] = []

    def fake_download(url: str, destination: Path) -> None:
        urls.append(url)
        destination.write_bytes(gzip.compress(idx_bytes(labels)))

    train = MnistDataset.train(tmp_path, downloader=fake_download, mirror="http://mirror.invalid/mnist/")
    assert urls == ["http://mirror.invalid/mnist/train-labels-idx1-ubyte.gz"]
    assert [item.label for item in train] == labels.tolist()


def test_no_network_error_names_directory_and_missing_files(tmp_path: Path) -> None:
    def offline(url: str, destination: Path) -> None:
        raise urllib.error.URLError("Name or service not known")

    with pytest.raises(FileNotFoundError) as info:
        MnistDataset.train(tmp_path / "data", downloader=offline)
    message = str(info.value)
    assert str(tmp_path / "data") in message
    assert TRAIN[0] in message and TRAIN[1] in message
    assert "Name or service not known" in message
    assert isinstance(info.value.__cause__, urllib.error.URLError)


def test_default_downloader_error_path_without_network(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    requested: list[str] = []

    def refuse(url: str, timeout: float) -> None:
        requested.append(url)
        raise urllib.error.URLError("network is unreachable")

    monkeypatch.setattr(urllib.request, "urlopen", refuse)
    with pytest.raises(
        FileNotFoundError, match=r"MNIST test files .*t10k-images-idx3-ubyte.* are missing from"
    ):
        MnistDataset.test(tmp_path)
    assert requested == [MNIST_MIRROR + "t10k-images-idx3-ubyte.gz"]
    assert list(tmp_path.iterdir()) == []  # no partial file left behind


def test_default_downloader_writes_the_response(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(
        urllib.request, "urlopen", lambda url, timeout: io.BytesIO(b"payload " + url.encode())
    )
    download_file("http://example.invalid/f.gz", tmp_path / "f.gz")
    assert (tmp_path / "f.gz").read_bytes() == b"payload http://example.invalid/f.gz"
    assert [p.name for p in tmp_path.iterdir()] == ["f.gz"]


def test_download_disabled_names_the_missing_files(tmp_path: Path) -> None:
    write_split(tmp_path, TEST, 1, seed=5)
    (tmp_path / TEST[0]).unlink()
    with pytest.raises(
        FileNotFoundError, match=rf"\['{TEST[0]}'\] \(plain or .gz\) are missing from {tmp_path}"
    ):
        MnistDataset.test(tmp_path, download=False)


def test_read_idx_other_types_and_ranks(tmp_path: Path) -> None:
    ints = np.arange(-3, 3, dtype=np.int32).reshape(2, 3)
    path = tmp_path / "ints"
    path.write_bytes(idx_bytes(ints, code=0x0C))
    np.testing.assert_array_equal(read_idx(path), ints)
    doubles = np.array([1.5, -2.25])
    path.write_bytes(idx_bytes(doubles, code=0x0E))
    np.testing.assert_array_equal(read_idx(path), doubles)


@pytest.mark.parametrize(
    ("data", "message"),
    [
        (b"\x00\x00", r"too short for its magic number \(2 bytes\)"),
        (b"\x01\x00\x08\x01" + struct.pack(">I", 1) + b"\x05", r"bad IDX magic number 0x01000801"),
        (b"\x00\x00\x07\x01" + struct.pack(">I", 1) + b"\x05", r"unknown IDX type code 0x07"),
        (
            b"\x00\x00\x08\x03" + struct.pack(">I", 1),
            r"header declares 3 dimensions but the file has only 8 bytes",
        ),
        (
            b"\x00\x00\x08\x01" + struct.pack(">I", 4) + b"\x05",
            r"IDX shape \(4,\) needs 4 data bytes, found 1",
        ),
    ],
)
def test_read_idx_rejects_malformed_files_naming_them(tmp_path: Path, data: bytes, message: str) -> None:
    path = tmp_path / "broken-idx"
    path.write_bytes(data)
    with pytest.raises(ValueError, match=message) as info:
        read_idx(path)
    assert str(path) in str(info.value)


def test_corrupt_gzip_names_the_file(tmp_path: Path) -> None:
    write_split(tmp_path, TRAIN, 1, seed=6)
    (tmp_path / TRAIN[0]).unlink()
    (tmp_path / f"{TRAIN[0]}.gz").write_bytes(b"definitely not gzip")
    with pytest.raises(ValueError, match=rf"{TRAIN[0]}.gz: not a valid gzip file"):
        MnistDataset.train(tmp_path, download=False)


def test_inconsistent_files_are_reported_with_their_names(tmp_path: Path) -> None:
    images, labels = digits(3, seed=7)
    write_idx(tmp_path / TRAIN[0], images)
    write_idx(tmp_path / TRAIN[1], labels[:2])
    with pytest.raises(ValueError, match=rf"{TRAIN[1]} holds 2 labels but .*{TRAIN[0]} holds 3 images"):
        MnistDataset.train(tmp_path, download=False)
    write_idx(tmp_path / TRAIN[1], np.array([1, 2, 12], dtype=np.uint8))
    with pytest.raises(ValueError, match=rf"{TRAIN[1]}: labels must be digits 0 to 9, found 12"):
        MnistDataset.train(tmp_path, download=False)
    write_idx(tmp_path / TRAIN[0], np.zeros((3, 28, 27), dtype=np.uint8))
    with pytest.raises(ValueError, match=rf"{TRAIN[0]}: expected uint8 images of shape \(n, 28, 28\)"):
        MnistDataset.train(tmp_path, download=False)
    write_idx(tmp_path / TRAIN[0], images)
    write_idx(tmp_path / TRAIN[1], labels.reshape(3, 1))
    with pytest.raises(ValueError, match=rf"{TRAIN[1]}: expected a uint8 vector of labels"):
        MnistDataset.train(tmp_path, download=False)


def test_constructor_validates_arrays() -> None:
    images, labels = digits(2, seed=8)
    assert len(MnistDataset(images, labels)) == 2
    with pytest.raises(ValueError, match=r"images must be uint8 of shape \(n, 28, 28\), found float32"):
        MnistDataset(images.astype(np.float32), labels)
    with pytest.raises(ValueError, match=r"labels must have shape \(2,\), found \(1,\)"):
        MnistDataset(images, labels[:1])


@pytest.mark.parametrize(("split", "size"), [("train", 4000), ("test", 1000)])
def test_shipped_sample_is_balanced_real_mnist(split: str, size: int) -> None:
    data = MnistDataset.sample(split)  # type: ignore[arg-type]
    assert len(data) == size
    images = np.stack([item.image for item in data])
    labels = np.array([item.label for item in data])
    assert images.shape == (size, 28, 28) and images.dtype == np.uint8
    assert np.bincount(labels, minlength=10).tolist() == [size // 10] * 10
    # MNIST's published pixel statistics (mean 0.1307, std 0.3081 of the 60,000 training digits),
    # which random or synthetic images would not match.
    scaled = images / 255.0
    assert abs(scaled.mean() - 0.1307) < 0.01 and abs(scaled.std() - 0.3081) < 0.01
    # Every digit has ink, framed by blank borders, as MNIST's centred 20x20 boxes leave them.
    assert (images.reshape(size, -1).max(axis=1) > 200).all()
    assert (images[:, :2, :] > 0).mean() < 0.001
    # A prefix mixes the classes (the contract checks the first 200 test digits).
    assert np.bincount(labels[:200], minlength=10).min() >= 10


def test_shipped_sample_splits_are_disjoint_and_fixed() -> None:
    train, test = MnistDataset.sample("train"), MnistDataset.sample("test")
    train_keys = {item.image.tobytes() for item in train}
    assert not any(item.image.tobytes() in train_keys for item in test)
    again = MnistDataset.sample("test")
    assert all(a == b for a, b in zip(test, again, strict=True))


def test_sample_rejects_an_unknown_split() -> None:
    with pytest.raises(ValueError, match="'train' or 'test', found 'valid'"):
        MnistDataset.sample("valid")  # type: ignore[arg-type]
