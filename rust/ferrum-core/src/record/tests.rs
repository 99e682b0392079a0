//! Golden bytes written by hand from Burn's format description, round trips
//! of every format and precision, and damaged inputs.

use super::item::Item;
use super::precision::Precision;
use super::recorder::{from_bytes, load_file, metadata, save_file, to_bytes, Format};
use crate::dtype::DType;
use crate::tensor::Tensor;

/// Every record format; the quantized tests run over them too.
pub(super) const FORMATS: [Format; 8] = [
    Format::NamedMpk,
    Format::NamedMpkGz,
    Format::Bin,
    Format::BinGz,
    Format::JsonGz,
    Format::PrettyJson,
    Format::BinBytes,
    Format::NamedMpkBytes,
];

fn param(id: &str, t: Tensor) -> Item {
    Item::Struct(vec![("id".into(), Item::Str(id.into())), ("param".into(), Item::tensor(t))])
}

fn one_param_record() -> Item {
    Item::Struct(vec![("w".into(), param("0400000000000", Tensor::from_vec(vec![1.0f32], &[1]).unwrap()))])
}

fn mpk_str(out: &mut Vec<u8>, s: &str) {
    if s.len() < 32 {
        out.push(0xa0 | s.len() as u8);
    } else {
        out.extend_from_slice(&[0xd9, s.len() as u8]);
    }
    out.extend_from_slice(s.as_bytes());
}

fn meta_strings(format: Format) -> Vec<(&'static str, String)> {
    vec![
        ("float", "f32".into()),
        ("int", "i32".into()),
        ("format", format!("{}<burn_core::record::settings::FullPrecisionSettings>", format.recorder_name())),
        ("version", "0.20.1".into()),
        ("settings", "FullPrecisionSettings".into()),
    ]
}

#[test]
fn named_mpk_golden_bytes() {
    let mut want = vec![0x83];
    mpk_str(&mut want, "metadata");
    want.push(0x85);
    for (k, v) in meta_strings(Format::NamedMpk) {
        mpk_str(&mut want, k);
        mpk_str(&mut want, &v);
    }
    mpk_str(&mut want, "item");
    want.push(0x81);
    mpk_str(&mut want, "w");
    want.push(0x82);
    mpk_str(&mut want, "id");
    mpk_str(&mut want, "0400000000000");
    mpk_str(&mut want, "param");
    want.push(0x83);
    mpk_str(&mut want, "bytes");
    want.extend_from_slice(&[0xc4, 4, 0, 0, 0x80, 0x3f]);
    mpk_str(&mut want, "shape");
    want.extend_from_slice(&[0x91, 1]);
    mpk_str(&mut want, "dtype");
    mpk_str(&mut want, "F32");
    mpk_str(&mut want, "_b");
    want.push(0x90);
    assert_eq!(to_bytes(&one_param_record(), Format::NamedMpk, Precision::Full).unwrap(), want);
}

#[test]
fn bincode_golden_bytes() {
    let mut want = Vec::new();
    for (_, v) in meta_strings(Format::Bin) {
        want.push(v.len() as u8);
        want.extend_from_slice(v.as_bytes());
    }
    want.push(13);
    want.extend_from_slice(b"0400000000000");
    want.extend_from_slice(&[4, 0, 0, 0x80, 0x3f]); // bytes
    want.extend_from_slice(&[1, 1]); // shape [1]
    want.push(1); // DType::F32 is variant 1
    assert_eq!(to_bytes(&one_param_record(), Format::Bin, Precision::Full).unwrap(), want);
}

#[test]
fn bincode_varints_and_options() {
    let mut out = Vec::new();
    super::bincode::write(
        &mut out,
        &Item::Seq(vec![Item::U64(250), Item::U64(251), Item::U64(70_000), Item::I64(-1), Item::Opt(None)]),
    )
    .unwrap();
    assert_eq!(out, vec![5, 250, 251, 251, 0, 252, 0x70, 0x11, 0x01, 0x00, 1, 0]);
}

#[test]
fn json_golden_text() {
    let m = meta_strings(Format::JsonGz);
    let meta = m.iter().map(|(k, v)| format!("\"{k}\":\"{v}\"")).collect::<Vec<_>>().join(",");
    let want = format!(
        "{{\"metadata\":{{{meta}}},\"item\":{{\"w\":{{\"id\":\"0400000000000\",\"param\":{{\"bytes\":[0,0,128,63],\"shape\":[1],\"dtype\":\"F32\"}}}}}},\"_b\":null}}"
    );
    let gz = to_bytes(&one_param_record(), Format::JsonGz, Precision::Full).unwrap();
    assert_eq!(&gz[..2], &[0x1f, 0x8b]);
    assert_eq!(String::from_utf8(super::gzip::decompress(&gz, super::limits::InflateCap::Model(1 << 20)).unwrap()).unwrap(), want);
    let pretty = to_bytes(&one_param_record(), Format::PrettyJson, Precision::Full).unwrap();
    assert!(String::from_utf8(pretty).unwrap().contains("\n  \"metadata\": {"));
}

fn model_record() -> Item {
    let w = Tensor::from_vec((0..12).map(|i| i as f32 * 0.37 - 2.0).collect::<Vec<f32>>(), &[3, 4]).unwrap();
    let b = Tensor::from_vec(vec![0.5f32, -0.25, 3.0, 1e-3], &[4]).unwrap();
    let steps = Tensor::from_vec(vec![3i64, -9], &[2]).unwrap();
    Item::Struct(vec![
        (
            "fc1".into(),
            Item::Struct(vec![("weight".into(), param("0400000000000", w)), ("bias".into(), Item::Opt(Some(Box::new(param("0800000000000", b)))))]),
        ),
        ("layers".into(), Item::Seq(vec![Item::Struct(vec![("steps".into(), param("0c00000000000", steps))])])),
        ("absent".into(), Item::Opt(None)),
    ])
}

fn tensor_at<'a>(item: &'a Item, path: &[&str]) -> &'a Tensor {
    let mut cur = item;
    for p in path {
        cur = match cur {
            Item::Seq(v) => &v[p.parse::<usize>().unwrap()],
            Item::Opt(Some(v)) => v.field(p).unwrap(),
            other => other.field(p).unwrap(),
        };
    }
    match cur {
        Item::Tensor(t) => t,
        other => panic!("not a tensor: {other:?}"),
    }
}

#[test]
fn every_format_and_precision_round_trips() {
    let rec = model_record();
    for format in FORMATS {
        for precision in [Precision::Full, Precision::Half, Precision::Double] {
            let bytes = to_bytes(&rec, format, precision).unwrap();
            let back = from_bytes(&bytes, format, Some(&rec)).unwrap();
            let w = tensor_at(&back, &["fc1", "weight", "param"]);
            assert_eq!(w.dtype(), DType::F32);
            assert_eq!(w.shape(), &[3, 4]);
            let tol = if precision == Precision::Half { 2e-3 } else { 0.0 };
            for (a, b) in w.to_vec::<f32>().iter().zip(tensor_at(&rec, &["fc1", "weight", "param"]).to_vec::<f32>()) {
                assert!((a - b).abs() <= tol * b.abs().max(1.0), "{format:?} {precision:?}: {a} vs {b}");
            }
            assert_eq!(tensor_at(&back, &["layers", "0", "steps", "param"]).to_vec::<i64>(), vec![3, -9]);
            assert_eq!(back.field("fc1").unwrap().field("weight").unwrap().field("id").map(|i| matches!(i, Item::Str(s) if s == "0400000000000")), Some(true));
        }
    }
}

#[test]
fn self_describing_formats_load_without_schema() {
    for format in [Format::NamedMpk, Format::PrettyJson, Format::JsonGz, Format::NamedMpkGz] {
        let back = from_bytes(&to_bytes(&model_record(), format, Precision::Half).unwrap(), format, None).unwrap();
        assert_eq!(tensor_at(&back, &["fc1", "weight", "param"]).shape(), &[3, 4]);
    }
    assert!(from_bytes(&to_bytes(&model_record(), Format::Bin, Precision::Full).unwrap(), Format::Bin, None).is_err());
}

#[test]
fn truncated_and_corrupted_inputs_are_errors() {
    let rec = model_record();
    for format in FORMATS {
        let bytes = to_bytes(&rec, format, Precision::Full).unwrap();
        for cut in [0, 1, bytes.len() / 3, bytes.len() / 2, bytes.len() - 1] {
            assert!(from_bytes(&bytes[..cut], format, Some(&rec)).is_err(), "{format:?} cut at {cut}");
        }
        assert!(from_bytes(b"PK\x03\x04 certainly not a record", format, Some(&rec)).is_err(), "{format:?}");
    }
    // A valid MessagePack value that is not a Burn record.
    let foreign = rmp_serde::to_vec_named(&Item::Seq(vec![Item::U64(1)])).unwrap();
    let err = from_bytes(&foreign, Format::NamedMpk, None).unwrap_err().to_string();
    assert!(err.contains("not a Burn record"), "{err}");
}

#[test]
fn shape_mismatch_names_the_parameter_and_both_shapes() {
    let rec = model_record();
    let mut other = model_record();
    if let Item::Struct(fields) = &mut other {
        fields[0].1 = Item::Struct(vec![
            ("weight".into(), param("0400000000000", Tensor::zeros(&[3, 8], DType::F32))),
            ("bias".into(), Item::Opt(None)),
        ]);
    }
    for format in [Format::NamedMpk, Format::Bin, Format::PrettyJson] {
        let err = from_bytes(&to_bytes(&rec, format, Precision::Full).unwrap(), format, Some(&other)).unwrap_err().to_string();
        assert!(err.contains("fc1.weight"), "{format:?}: {err}");
        assert!(err.contains("[3, 4]") && err.contains("[3, 8]"), "{format:?}: {err}");
    }
}

#[test]
fn files_are_atomic_and_errors_name_them() {
    let dir = std::env::temp_dir().join(format!("ferrum-record-test-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let path = dir.join("model.mpk");
    save_file(&model_record(), &path, Format::NamedMpk, Precision::Full).unwrap();
    let leftovers: Vec<_> = std::fs::read_dir(&dir).unwrap().map(|e| e.unwrap().file_name()).collect();
    assert_eq!(leftovers.len(), 1, "{leftovers:?}");
    assert!(load_file(&path, Format::NamedMpk, Some(&model_record())).is_ok());
    std::fs::write(&path, b"\x93garbage").unwrap();
    let err = load_file(&path, Format::NamedMpk, None).unwrap_err().to_string();
    assert!(err.contains("model.mpk"), "{err}");
    assert!(save_file(&model_record(), &dir.join("missing/x.mpk"), Format::NamedMpk, Precision::Full).is_err());
    std::fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn metadata_names_precision() {
    let m = metadata(Format::NamedMpk, Precision::Half);
    assert!(matches!(m.field("float"), Some(Item::Str(s)) if s == "half::binary16::f16"));
    assert!(matches!(m.field("int"), Some(Item::Str(s)) if s == "i16"));
}

#[test]
fn tuples_are_fixed_size_in_bincode_and_arrays_elsewhere() {
    // Burn's `[usize; 2]` constant fields: two nils, no length in bincode.
    let consts = Item::Struct(vec![("stride".into(), Item::Tuple(vec![Item::Opt(None), Item::Opt(None)])), ("groups".into(), Item::Opt(None))]);
    let mut out = Vec::new();
    super::bincode::write(&mut out, &consts).unwrap();
    assert_eq!(out, vec![0, 0, 0]);
    let back = super::bincode::Reader::new(&out).read(&consts, "").unwrap();
    assert!(matches!(back.field("stride"), Some(Item::Tuple(v)) if v.len() == 2));
    let mpk = rmp_serde::to_vec_named(&consts).unwrap();
    assert_eq!(mpk, vec![0x82, 0xa6, b's', b't', b'r', b'i', b'd', b'e', 0x92, 0xc0, 0xc0, 0xa6, b'g', b'r', b'o', b'u', b'p', b's', 0xc0]);
}

fn rank_variant(rank: u32, state: Item) -> Item {
    Item::Enum { variant: "V1".into(), index: 0, value: Box::new(Item::Enum { variant: format!("Rank{rank}").into(), index: rank, value: Box::new(state) }) }
}

fn adam_state(time: u64, m: Tensor) -> Item {
    Item::Struct(vec![("momentum".into(), Item::Struct(vec![("time".into(), Item::U64(time)), ("moment_1".into(), Item::tensor(m.clone())), ("moment_2".into(), Item::tensor(m))]))])
}

/// Optimizer records as Burn's `HashMap<ParamId, AdaptorRecord>`: a map of
/// varint length, enums of varint index, entries of different ranks read
/// through a schema of alternative variants.
#[test]
fn bincode_maps_and_enums_of_any_variant() {
    let m1 = Tensor::from_vec(vec![1.0f32, 2.0], &[2]).unwrap();
    let m2 = Tensor::from_vec(vec![3.0f32; 6], &[2, 3]).unwrap();
    let record = Item::Map(vec![(Item::Str("a".into()), rank_variant(1, adam_state(3, m1))), (Item::Str("b".into()), rank_variant(2, adam_state(300, m2)))]);
    let mut out = Vec::new();
    super::bincode::write(&mut out, &super::wire::encode_tensors(&record, Precision::Full).unwrap()).unwrap();
    // map length 2, key "a", V1 = 0, Rank1 = 1, time 3, moment_1 bytes (len 8) ...
    assert_eq!(&out[..7], &[2, 1, b'a', 0, 1, 3, 8]);
    let template = Tensor::from_vec(vec![0.0f32], &[1]).unwrap();
    let alternatives = (0..=8).map(|r| Item::Enum { variant: format!("Rank{r}").into(), index: r, value: Box::new(adam_state(1, template.clone())) }).collect();
    let any_rank = Item::Enum { variant: "Rank".into(), index: super::bincode::ANY_VARIANT, value: Box::new(Item::Seq(alternatives)) };
    let schema = Item::Map(vec![(Item::Str(String::new()), Item::Enum { variant: "V1".into(), index: 0, value: Box::new(any_rank) })]);
    let back = super::bincode::Reader::new(&out).read(&schema, "").unwrap();
    let Item::Map(pairs) = back else { panic!("expected a map, found {back:?}") };
    assert_eq!(pairs.len(), 2);
    let Item::Enum { value, .. } = &pairs[1].1 else { panic!("expected V1") };
    let Item::Enum { variant, index, value } = value.as_ref() else { panic!("expected a rank variant") };
    assert_eq!((&**variant, *index), ("Rank2", 2));
    let momentum = value.field("momentum").unwrap();
    assert!(matches!(momentum.field("time"), Some(Item::U64(300))));
    let Some(Item::Tensor(t)) = momentum.field("moment_2") else { panic!("expected a tensor") };
    assert_eq!(t.shape(), &[2, 3]);
    // A variant the schema does not list is an error naming the alternatives.
    let narrow = Item::Map(vec![(Item::Str(String::new()), Item::Enum { variant: "V1".into(), index: 0, value: Box::new(Item::Enum { variant: "Rank".into(), index: super::bincode::ANY_VARIANT, value: Box::new(Item::Seq(vec![])) }) })]);
    let err = super::bincode::Reader::new(&out).read(&narrow, "").unwrap_err().to_string();
    assert!(err.contains("found variant index 1") && err.contains("a"), "{err}");
}

#[test]
fn enum_records_round_trip_in_every_format() {
    // Burn's enum modules (Normalization, Activation): `{"Layer": record}` in the
    // self-describing formats, the variant index in bincode.
    let inner = Item::Struct(vec![("gamma".into(), param("0400000000000", Tensor::from_vec(vec![1.5f32, -2.0], &[2]).unwrap()))]);
    let rec = Item::Struct(vec![("norm".into(), Item::Enum { variant: "Layer".into(), index: 3, value: Box::new(inner) })]);
    for format in FORMATS {
        for precision in [Precision::Full, Precision::Double] {
            let back = from_bytes(&to_bytes(&rec, format, precision).unwrap(), format, Some(&rec)).unwrap();
            match back.field("norm") {
                Some(Item::Enum { variant, index, value }) => {
                    assert_eq!((&**variant, *index), ("Layer", 3), "{format:?}");
                    let t = tensor_at(value, &["gamma", "param"]);
                    // The model's dtype, whatever precision the file stores.
                    assert_eq!(t.dtype(), DType::F32, "{format:?} {precision:?}");
                    assert_eq!(t.to_vec::<f32>(), vec![1.5, -2.0]);
                }
                other => panic!("{format:?}: not an enum: {other:?}"),
            }
        }
    }
}

#[test]
fn a_record_node_stays_small() {
    // A decoded file may hold millions of nodes: its memory is this size times their count.
    assert!(std::mem::size_of::<Item>() <= 32, "{}", std::mem::size_of::<Item>());
}

#[test]
fn map_keys_are_strings_or_numbers() {
    // {"metadata": {}, "item": {[1]: 2}}: MessagePack allows a list as a key, Python's dict does not.
    let mut data = vec![0x82, 0xa8];
    data.extend_from_slice(b"metadata");
    data.extend_from_slice(&[0x80, 0xa4]);
    data.extend_from_slice(b"item");
    data.extend_from_slice(&[0x81, 0x91, 0x01, 0x02]);
    let err = from_bytes(&data, Format::NamedMpk, None).unwrap_err().to_string();
    assert!(err.contains("a map key must be a string or a number, found a list"), "{err}");
    data.truncate(data.len() - 4);
    data.extend_from_slice(&[0x81, 0x01, 0x02]);
    assert!(from_bytes(&data, Format::NamedMpk, None).is_ok());
}
