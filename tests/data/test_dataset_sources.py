"""Named sources read from local files: CIFAR-10/100, AG News, text folders, Speech Commands.

Each test writes small files in the source's format into tmp_path and checks
the items against the values written.
"""

from __future__ import annotations

import wave
from pathlib import Path

import numpy as np
import numpy.typing as npt
import pytest
from ferrum.data.dataset.audio import SpeechCommandClass, SpeechCommandsDataset, read_wav
from ferrum.data.dataset.nlp import (
    AgNewsDataset,
    AgNewsItem,
    TextFolderDataset,
    TextInvalidFileExtensionError,
    TextLoaderIOError,
    TextParsingError,
    decode_text,
)
from ferrum.data.dataset.vision import (
    CIFAR10_CLASSES,
    CIFAR100_CLASSES,
    Annotation,
    CifarDataset,
    CifarImageDataset,
    CifarType,
)

# ------------------------------------------------------------------------------------------------ CIFAR


def cifar_records(
    rng: np.random.Generator, count: int, labels: list[list[int]]
) -> tuple[bytes, npt.NDArray[np.uint8]]:
    """``count`` records with random [32, 32, 3] images, label bytes ``labels[i]`` first."""
    images = rng.integers(0, 256, size=(count, 32, 32, 3), dtype=np.uint8)
    chunks = [bytes(labels[i]) + images[i].transpose(2, 0, 1).tobytes() for i in range(count)]
    return b"".join(chunks), images


def test_cifar10_reads_every_batch_in_order(tmp_path: Path) -> None:
    rng = np.random.default_rng(0)
    folder = tmp_path / "cifar-10-batches-bin"
    folder.mkdir()
    counts = [1, 2, 1, 3, 1]
    images: list[npt.NDArray[np.uint8]] = []
    labels: list[int] = []
    for number, count in enumerate(counts, 1):
        batch_labels = [int(v) for v in rng.integers(0, 10, size=count)]
        data, batch_images = cifar_records(rng, count, [[v] for v in batch_labels])
        (folder / f"data_batch_{number}.bin").write_bytes(data)
        images.extend(batch_images)
        labels.extend(batch_labels)
    test_data, test_images = cifar_records(rng, 2, [[9], [0]])
    (folder / "test_batch.bin").write_bytes(test_data)

    cifar = CifarDataset(CifarType.Cifar10, tmp_path)  # the folder holding cifar-10-batches-bin
    train = cifar.train()
    assert len(train) == 8 and train.get(8) is None
    for index, item in enumerate(train):
        assert item.image.shape == (32, 32, 3) and item.image.dtype == np.uint8
        assert np.array_equal(item.image, images[index])
        assert item.annotation == Annotation.Label(labels[index])
        assert (item.image_width, item.image_height) == (32, 32)
    assert train[3].image_path == f"{folder / 'data_batch_3.bin'}[0]"
    test = CifarDataset(CifarType.Cifar10, folder).test()
    assert [i.annotation for i in test] == [Annotation.Label(9), Annotation.Label(0)]
    assert np.array_equal(test[1].image, test_images[1])
    assert train.class_ids()["truck"] == 9 and len(CIFAR10_CLASSES) == 10


def test_cifar_pixels_are_stored_plane_by_plane(tmp_path: Path) -> None:
    red = np.arange(1024) % 256
    green = (np.arange(1024) * 3) % 256
    blue = np.full(1024, 200)
    path = tmp_path / "one.bin"
    path.write_bytes(bytes([4]) + np.concatenate([red, green, blue]).astype(np.uint8).tobytes())
    item = CifarImageDataset.from_files([path], CifarType.Cifar10)[0]
    # Pixel (row 1, column 2) is value 34 of each plane: red 34, green 102, blue 200.
    assert item.image[1, 2].tolist() == [34, 102, 200]
    assert item.image[31, 31].tolist() == [1023 % 256, (1023 * 3) % 256, 200]


def test_cifar100_uses_the_fine_label(tmp_path: Path) -> None:
    rng = np.random.default_rng(1)
    data, images = cifar_records(rng, 3, [[19, 99], [0, 0], [7, 42]])
    (tmp_path / "train.bin").write_bytes(data)
    (tmp_path / "test.bin").write_bytes(data[: 3074])
    cifar = CifarDataset(CifarType.Cifar100, tmp_path)
    train = cifar.train()
    assert [i.annotation for i in train] == [Annotation.Label(99), Annotation.Label(0), Annotation.Label(42)]
    assert np.array_equal(train[2].image, images[2])
    assert len(cifar.test()) == 1
    assert CifarType.Cifar100.record_size == 3074 and CifarType.Cifar10.record_size == 3073
    assert len(CIFAR100_CLASSES) == 100 and list(CIFAR100_CLASSES) == sorted(CIFAR100_CLASSES)
    assert train.class_ids()["worm"] == 99


def test_cifar_truncated_file_names_file_and_sizes(tmp_path: Path) -> None:
    path = tmp_path / "data_batch_1.bin"
    path.write_bytes(bytes(3073 * 2 + 5))
    with pytest.raises(ValueError, match=r"data_batch_1.bin: 6151 bytes is not a whole number of CIFAR-10 "
                                         r"records of 3073 bytes"):  # fmt: skip
        CifarImageDataset.from_files([path], CifarType.Cifar10)
    path.write_bytes(b"")
    with pytest.raises(ValueError, match=r"0 bytes is not a whole number"):
        CifarImageDataset.from_files([path], CifarType.Cifar10)


def test_cifar_bad_labels_are_refused(tmp_path: Path) -> None:
    rng = np.random.default_rng(2)
    path = tmp_path / "test_batch.bin"
    path.write_bytes(cifar_records(rng, 3, [[1], [1], [10]])[0])
    with pytest.raises(ValueError, match=r"test_batch.bin: record 2 has label 10, expected 0 to 9 for CIFAR"):
        CifarImageDataset.from_files([path], CifarType.Cifar10)
    path.write_bytes(cifar_records(rng, 2, [[3, 5], [20, 5]])[0])
    with pytest.raises(ValueError, match=r"record 1 has coarse label 20, expected 0 to 19 for CIFAR-100"):
        CifarImageDataset.from_files([path], CifarType.Cifar100)


def test_cifar_missing_files_are_named(tmp_path: Path) -> None:
    rng = np.random.default_rng(3)
    for number in (1, 2, 4, 5):
        (tmp_path / f"data_batch_{number}.bin").write_bytes(cifar_records(rng, 1, [[0]])[0])
    with pytest.raises(FileNotFoundError, match=r"CIFAR-10 files \['data_batch_3.bin'\] are missing from .* "
                                                r"download cifar-10-binary.tar.gz"):  # fmt: skip
        CifarDataset(CifarType.Cifar10, tmp_path).train()
    with pytest.raises(FileNotFoundError, match=r"\['test.bin'\] are missing"):
        CifarDataset(CifarType.Cifar100, tmp_path).test()
    with pytest.raises(FileNotFoundError, match=r"nothing\.bin not found"):
        CifarImageDataset.from_files([tmp_path / "nothing.bin"], CifarType.Cifar10)
    with pytest.raises(TypeError, match="must be a CifarType"):
        CifarDataset("cifar10", tmp_path)  # type: ignore[arg-type]


# ---------------------------------------------------------------------------------------------- AG News

# Burn's expected first training item, written as AG News writes it (backslash escapes kept).
AG_TRAIN = (
    '"3","Wall St. Bears Claw Back Into the Black (Reuters)","Reuters - Short-sellers, Wall Street\'s '
    'dwindling\\band of ultra-cynics, are seeing green again."\n'
    '"2","Quoted ""title""","First line,\nsecond line"\n'
    '"2","Nets get Carter from Raptors","INDIANAPOLIS -- All-Star Vince Carter was traded."\n'
)


def test_ag_news_items_are_the_rows_written(tmp_path: Path) -> None:
    folder = tmp_path / "ag_news_csv"
    folder.mkdir()
    (folder / "train.csv").write_text(AG_TRAIN, encoding="utf-8")
    (folder / "test.csv").write_text(
        '"3","EBay gets into rentals","EBay plans to buy Rent.com for \\$415 million."\n', encoding="utf-8"
    )
    news = AgNewsDataset(tmp_path)
    train = news.train()
    assert len(train) == 3
    assert train.get(0) == AgNewsItem(
        "3",
        "Wall St. Bears Claw Back Into the Black (Reuters)",
        "Reuters - Short-sellers, Wall Street's dwindling\\band of ultra-cynics, are seeing green again.",
    )
    assert train.get(1) == AgNewsItem("2", 'Quoted "title"', "First line,\nsecond line")
    assert train[-1].title == "Nets get Carter from Raptors"
    assert AgNewsDataset(folder).test().get(0) == AgNewsItem(
        "3", "EBay gets into rentals", "EBay plans to buy Rent.com for \\$415 million."
    )


def test_ag_news_bad_files_are_named(tmp_path: Path) -> None:
    with pytest.raises(FileNotFoundError, match=r"AG News file train.csv is missing from .*put the"):
        AgNewsDataset(tmp_path).train()
    (tmp_path / "train.csv").write_text('"1","a","b"\n"2","only two"\n')
    with pytest.raises(ValueError, match=r"train.csv line 2: expected 3 fields .* found 2"):
        AgNewsDataset(tmp_path).train()
    (tmp_path / "train.csv").write_text('"5","a","b"\n')
    with pytest.raises(ValueError, match=r"train.csv line 1: class index must be 1 to 4, found '5'"):
        AgNewsDataset(tmp_path).train()
    (tmp_path / "test.csv").write_bytes(b'"1","\xff","b"\n')
    with pytest.raises(ValueError, match=r"test\.csv: not UTF-8"):
        AgNewsDataset(tmp_path).test()


# ------------------------------------------------------------------------------------------ text folder

SAMPLE = "This is a {} text sample for testing the text folder dataset functionality."
TEXTS = {
    ("negative", "sample1.txt"): SAMPLE.format("negative"),
    ("negative", "sample2.txt"): "另一个负面文本样本\uff0c用以确保数据集能够处理同一类别中的多个文件。",
    ("positive", "sample1.txt"): SAMPLE.format("positive"),
    ("positive", "sample2.txt"): "另一个正面文本样本\uff0c以确保数据集能够处理同一类别中的多个文件。",
}


@pytest.fixture
def text_root(tmp_path: Path) -> Path:
    for (folder, name), text in TEXTS.items():
        (tmp_path / folder).mkdir(exist_ok=True)
        (tmp_path / folder / name).write_text(text, encoding="utf-8")
    (tmp_path / "positive" / "notes.md").write_text("not a text file of the dataset")
    return tmp_path


def test_text_folder_dataset(text_root: Path) -> None:
    dataset = TextFolderDataset.new_classification(text_root)
    assert len(dataset) == 4 and dataset.get(4) is None
    assert dataset.class_ids() == {"negative": 0, "positive": 1}
    items = list(dataset)
    assert [i.label for i in items] == [0, 0, 1, 1]
    for item, ((folder, name), text) in zip(items, sorted(TEXTS.items()), strict=True):
        assert item.text.text == text
        assert item.text.text_path == str(text_root / folder / name)


def test_text_folder_dataset_with_invalid_extension(text_root: Path) -> None:
    with pytest.raises(TextInvalidFileExtensionError, match="extension 'invalid' is not supported"):
        TextFolderDataset.new_classification_with(text_root, ["invalid"])


def test_text_folder_dataset_with_items(text_root: Path) -> None:
    items = [
        (text_root / "positive" / "sample1.txt", "positive"),
        (text_root / "negative" / "sample2.txt", "negative"),
    ]
    dataset = TextFolderDataset.new_classification_with_items(items, ["positive", "negative"])
    assert len(dataset) == 2 and dataset.get(2) is None
    item0, item1 = dataset[0], dataset[1]
    assert (item0.text.text, item0.label) == (TEXTS[("positive", "sample1.txt")], 0)
    assert item1.label == 1 and "negative" in item1.text.text_path
    assert item1.text.text == "另一个负面文本样本\uff0c用以确保数据集能够处理同一类别中的多个文件。"


def test_text_encodings_are_detected(tmp_path: Path) -> None:
    text = "Grüße, 你好"
    encoded = {
        "utf8_bom.txt": b"\xef\xbb\xbf" + text.encode("utf-8"),
        "utf16le.txt": b"\xff\xfe" + text.encode("utf-16-le"),
        "utf16be.txt": b"\xfe\xff" + text.encode("utf-16-be"),
        "gb18030.txt": text.encode("gb18030"),
    }
    (tmp_path / "c").mkdir()
    for name, data in encoded.items():
        (tmp_path / "c" / name).write_bytes(data)
    assert [item.text.text for item in TextFolderDataset.new_classification(tmp_path)] == [text] * 4
    assert decode_text(b"ok \xff") == "ok \ufffd"  # no encoding fits: undecodable bytes replaced


def test_text_folder_errors_name_the_problem(
    text_root: Path, tmp_path_factory: pytest.TempPathFactory
) -> None:
    with pytest.raises(TextLoaderIOError, match="is not a directory"):
        TextFolderDataset.new_classification(text_root / "absent")
    empty = tmp_path_factory.mktemp("empty")
    with pytest.raises(TextLoaderIOError, match=r"holds no text file \(txt\)"):
        TextFolderDataset.new_classification(empty)
    with pytest.raises(TextParsingError, match="label 'neutral' is not one of the classes"):
        TextFolderDataset.new_classification_with_items(
            [(text_root / "positive" / "sample1.txt", "neutral")], ["a"]
        )
    with pytest.raises(TextLoaderIOError, match=r"missing\.txt not found"):
        TextFolderDataset.new_classification_with_items([(text_root / "missing.txt", "a")], ["a"])
    with pytest.raises(TextInvalidFileExtensionError, match=r"notes\.md: extension 'md'"):
        TextFolderDataset.new_classification_with_items([(text_root / "positive" / "notes.md", "a")], ["a"])
    with pytest.raises(TextParsingError, match="class 'a' is listed twice"):
        TextFolderDataset.new_classification_with_items([], ["a", "a"])
    dataset = TextFolderDataset.new_classification(text_root)
    (text_root / "negative" / "sample1.txt").unlink()
    with pytest.raises(TextLoaderIOError, match=r"sample1\.txt cannot be read"):
        dataset.get(0)


# ------------------------------------------------------------------------------------- Speech Commands


def write_wav(path: Path, frames: bytes, *, width: int = 2, channels: int = 1, rate: int = 16000) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    with wave.open(str(path), "wb") as out:
        out.setnchannels(channels)
        out.setsampwidth(width)
        out.setframerate(rate)
        out.writeframes(frames)


def int16(values: list[int]) -> bytes:
    return np.array(values, "<i2").tobytes()


@pytest.fixture
def speech_root(tmp_path: Path) -> Path:
    clips = {
        "yes/a_nohash_0.wav": [0, 16384, -32768],
        "yes/b_nohash_0.wav": [1, 2],
        "no/a_nohash_0.wav": [-16384],
        "no/c_nohash_1.wav": [100, -100],
        "visual/d_nohash_0.wav": [32767],
        "_background_noise_/white_noise.wav": [8, -8, 8, -8],
    }
    for relative, values in clips.items():
        write_wav(tmp_path / relative, int16(values))
    (tmp_path / "validation_list.txt").write_text("no/c_nohash_1.wav\n")
    (tmp_path / "testing_list.txt").write_text("yes/b_nohash_0.wav\nvisual/d_nohash_0.wav\n\n")
    (tmp_path / "README.md").write_text("not a clip")
    return tmp_path


def test_speech_commands_splits_follow_the_lists(speech_root: Path) -> None:
    train = SpeechCommandsDataset.train(speech_root)
    assert [p.relative_to(speech_root).as_posix() for p in train.paths()] == [
        "_background_noise_/white_noise.wav",
        "no/a_nohash_0.wav",
        "yes/a_nohash_0.wav",
    ]
    labels = [item.label for item in train]
    assert labels == [SpeechCommandClass.Silence, SpeechCommandClass.No, SpeechCommandClass.Yes]
    assert [int(label) for label in labels] == [35, 1, 0] and str(labels[2]) == "Yes"
    yes = train[2]
    assert yes.sample_rate == 16000 and yes.audio_samples.dtype == np.float32
    assert yes.audio_samples.tolist() == [0.0, 0.5, -1.0]
    assert train[0].audio_samples.tolist() == [v / 32768 for v in (8, -8, 8, -8)]

    test = SpeechCommandsDataset.test(speech_root)
    assert [(i.label, i.audio_samples.tolist()) for i in test] == [
        (SpeechCommandClass.Visual, [32767 / 32768]),
        (SpeechCommandClass.Yes, [1 / 32768, 2 / 32768]),
    ]
    validation = SpeechCommandsDataset.validation(speech_root)
    assert len(validation) == 1 and validation[0].label is SpeechCommandClass.No
    assert validation[0].audio_samples.tolist() == [100 / 32768, -100 / 32768]
    assert SpeechCommandsDataset.num_classes() == 37 and validation.get(1) is None


def test_wav_sample_widths_and_channels(tmp_path: Path) -> None:
    write_wav(tmp_path / "u8.wav", bytes([0, 128, 255]), width=1, rate=8000)
    samples, rate = read_wav(tmp_path / "u8.wav")
    assert rate == 8000 and samples.tolist() == [-1.0, 0.0, 127 / 128]
    pcm24 = b"".join(v.to_bytes(3, "little", signed=True) for v in (-(2**23), 1, 2**23 - 1))
    write_wav(tmp_path / "s24.wav", pcm24, width=3)
    expected = [-1.0, np.float32(2**-23), np.float32((2**23 - 1) / 2**23)]
    assert read_wav(tmp_path / "s24.wav")[0].tolist() == expected
    write_wav(tmp_path / "s32.wav", np.array([-(2**31), 2**30], "<i4").tobytes(), width=4)
    assert read_wav(tmp_path / "s32.wav")[0].tolist() == [-1.0, 0.5]
    write_wav(tmp_path / "stereo.wav", int16([16384, -16384, 0, 8192]), channels=2)
    assert read_wav(tmp_path / "stereo.wav")[0].tolist() == [0.5, -0.5, 0.0, 0.25]  # interleaved, as Burn


def test_bad_wav_files_are_named(tmp_path: Path) -> None:
    path = tmp_path / "cut.wav"
    write_wav(path, int16(list(range(100))))
    path.write_bytes(path.read_bytes()[:-50])
    with pytest.raises(ValueError, match=r"cut.wav is truncated: its header announces 100 frames"):
        read_wav(path)
    (tmp_path / "text.wav").write_bytes(b"this is not audio at all")
    with pytest.raises(ValueError, match=r"text\.wav cannot be read"):
        read_wav(tmp_path / "text.wav")
    huge = tmp_path / "huge.wav"
    write_wav(huge, int16([1, 2]))
    data = bytearray(huge.read_bytes())
    data[40:44] = (2**31).to_bytes(4, "little")  # the data chunk claims 2 GiB
    huge.write_bytes(bytes(data))
    with pytest.raises(ValueError, match=r"huge\.wav is truncated"):
        read_wav(huge)
    with pytest.raises(FileNotFoundError, match=r"absent\.wav not found"):
        read_wav(tmp_path / "absent.wav")


def test_speech_commands_errors_name_the_missing_piece(speech_root: Path) -> None:
    (speech_root / "testing_list.txt").unlink()
    with pytest.raises(FileNotFoundError, match=r"test list testing_list.txt is missing from .*put it at"):
        SpeechCommandsDataset.train(speech_root)
    (speech_root / "testing_list.txt").write_text("yes/gone.wav\n")
    with pytest.raises(FileNotFoundError, match=r"clip .*yes/gone\.wav, listed in .*testing_list\.txt"):
        SpeechCommandsDataset.test(speech_root)
    (speech_root / "testing_list.txt").write_text("../../etc/passwd\n")
    with pytest.raises(ValueError, match=r"testing_list.txt line 1: expected 'word/file.wav'"):
        SpeechCommandsDataset.test(speech_root)
    (speech_root / "testing_list.txt").write_text("")
    (speech_root / "maybe").mkdir()
    with pytest.raises(ValueError, match=r"folder .*maybe is not a Speech Commands word"):
        SpeechCommandsDataset.train(speech_root)
    with pytest.raises(ValueError, match="split must be 'train', 'test' or 'validation', found 'dev'"):
        SpeechCommandsDataset(speech_root, "dev")  # type: ignore[arg-type]
    with pytest.raises(FileNotFoundError, match=r"Speech Commands folder .*absent not found"):
        SpeechCommandsDataset.train(speech_root / "absent")
