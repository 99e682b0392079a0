//! Quantized records: bytes written by hand from Burn 0.20.1's layout
//! (`QuantizedBytes`, cubecl's `QuantScheme` derive), Burn's own test
//! vectors, round trips, and damaged input.

use super::item::Item;
use super::precision::Precision;
use super::quantized::{self, Store};
use super::recorder::{from_bytes, to_bytes, Format};
use super::tests::FORMATS;
use crate::quant::{QTensor, QuantLevel, QuantParam, QuantScheme, QuantValue};
use crate::tensor::Tensor;

fn scheme(value: QuantValue, level: QuantLevel, param: QuantParam) -> QuantScheme {
    QuantScheme { value, level, param }
}

/// Burn's `should_pack_unpack_quantization_parameters_per_tensor_symmetric`:
/// `[[0, 1, 2], [3, 4, 5]]` quantized Q8S with one scale.
fn burn_q8s() -> QTensor {
    QTensor::from_parts(vec![0, 25, 51, 76, 102, 127], &[2, 3], vec![0.039_370_08], &scheme(QuantValue::Q8S, QuantLevel::Tensor, QuantParam::F32))
        .unwrap()
}

fn record(q: QTensor) -> Item {
    Item::Struct(vec![("w".into(), Item::Struct(vec![("id".into(), Item::Str("0400000000000".into())), ("param".into(), Item::QTensor(Box::new(q)))]))])
}

fn loaded(item: &Item) -> &QTensor {
    match item.field("w").and_then(|w| w.field("param")) {
        Some(Item::QTensor(q)) => q,
        other => panic!("expected a quantized tensor, found {other:?}"),
    }
}

fn same(a: &QTensor, b: &QTensor) {
    assert_eq!(a.shape(), b.shape());
    assert_eq!(a.scheme(), b.scheme());
    assert_eq!(a.raw_values(), b.raw_values());
    assert_eq!(a.raw_scales(), b.raw_scales());
}

fn mpk_str(out: &mut Vec<u8>, s: &str) {
    out.push(0xa0 | s.len() as u8);
    out.extend_from_slice(s.as_bytes());
}

#[test]
fn values_then_f32_scales_as_burns_quantized_bytes() {
    let mut want = vec![0u8, 25, 51, 76, 102, 127];
    want.extend_from_slice(&0.039_370_08f32.to_le_bytes());
    assert_eq!(quantized::to_bytes(&burn_q8s()), want);
    // Q8F takes -128; values are two's complement bytes.
    let q = QTensor::from_parts(vec![-128, -1, 3], &[3], vec![0.5], &scheme(QuantValue::Q8F, QuantLevel::Tensor, QuantParam::F32)).unwrap();
    assert_eq!(quantized::to_bytes(&q), vec![0x80, 0xff, 3, 0, 0, 0, 0x3f]);
}

#[test]
fn sub_byte_values_pack_as_burns_u32_words() {
    // Burn's should_pack_i8s_to_u32 (8-bit lanes of one word): [-128, 2, -3, 127] -> 2147287680.
    let q8 = QTensor::from_parts(vec![-128, 2, -3, 127], &[4], vec![1.0], &scheme(QuantValue::Q8F, QuantLevel::Tensor, QuantParam::F32)).unwrap();
    assert_eq!(&quantized::to_bytes(&q8)[..4], &2_147_287_680u32.to_le_bytes());
    // Burn's should_unpack_u32s_to_i8s_arange: 128 Q4S values in 16 words.
    let words: [u32; 16] = [
        0, 286331136, 286331153, 572657937, 572662306, 857874978, 858993459, 858993459, 1145324612, 1145324612, 1431655748, 1431655765,
        1717982549, 1717986918, 2003199590, 2004318071,
    ];
    let want: Vec<i8> = [10, 18, 18, 18, 18, 18, 18, 10].iter().enumerate().flat_map(|(v, &n)| std::iter::repeat_n(v as i8, n)).collect();
    assert_eq!(want.len(), 128);
    let mut bytes: Vec<u8> = words.iter().flat_map(|w| w.to_le_bytes()).collect();
    bytes.extend_from_slice(&0.25f32.to_le_bytes());
    let s = scheme(QuantValue::Q4S, QuantLevel::Tensor, QuantParam::F32);
    let q = quantized::from_bytes(&bytes, &[128], &s, Store::PackedU32(0), "w").unwrap();
    assert_eq!(q.raw_values(), want.as_slice());
    assert_eq!(quantized::to_bytes(&q), bytes);
    // A partial last word, and sign extension: Q2F -2, 1, -1 at 2 bits = 0b10, 0b01, 0b11.
    let q2 = QTensor::from_parts(vec![-2, 1, -1], &[3], vec![1.0], &scheme(QuantValue::Q2F, QuantLevel::Tensor, QuantParam::F32)).unwrap();
    let b = quantized::to_bytes(&q2);
    assert_eq!(&b[..4], &(0b11_01_10u32).to_le_bytes());
    same(&quantized::from_bytes(&b, &[3], q2.scheme(), Store::PackedU32(0), "w").unwrap(), &q2);
}

#[test]
fn bincode_golden_bytes() {
    let mut want = Vec::new();
    let meta = to_bytes(&Item::Struct(vec![]), Format::Bin, Precision::Full).unwrap();
    want.extend_from_slice(&meta);
    want.push(13);
    want.extend_from_slice(b"0400000000000");
    want.push(10); // 6 values + one f32 scale
    want.extend_from_slice(&[0, 25, 51, 76, 102, 127]);
    want.extend_from_slice(&0.039_370_08f32.to_le_bytes());
    want.extend_from_slice(&[2, 2, 3]); // shape [2, 3]
    // DType::QFloat (variant 14) { value: Q8S (6), param: F32 (0), store: Native (0), level: Tensor (0), mode: Symmetric (0) }
    want.extend_from_slice(&[14, 6, 0, 0, 0, 0]);
    let bytes = to_bytes(&record(burn_q8s()), Format::Bin, Precision::Full).unwrap();
    assert_eq!(bytes, want);
    // The half setting leaves quantized tensors as they are (Burn converts float data only).
    let half = to_bytes(&record(burn_q8s()), Format::Bin, Precision::Half).unwrap();
    assert!(half.ends_with(&want[meta.len()..]), "{half:?}");
}

#[test]
fn bincode_block_size_dims_are_raw_bytes() {
    // A u8 is one byte in bincode, not a varint: 252 stays 252 (a varint would be 251, 252, 0).
    let x = Tensor::from_vec((0..504).map(|i| (i as f32 - 250.0) / 100.0).collect::<Vec<f32>>(), &[2, 252]).unwrap();
    let s = scheme(QuantValue::Q4S, QuantLevel::Block(vec![252]), QuantParam::BF16);
    let q = QTensor::quantize_dynamic(&x, &s).unwrap();
    let bytes = to_bytes(&record(q.clone()), Format::Bin, Precision::Full).unwrap();
    // Q4S (7), BF16 (2), PackedU32 (2) along dim 0, Block (1) [252, 1, 1, 1, 1] len 1, Symmetric.
    assert!(bytes.ends_with(&[14, 7, 2, 2, 0, 1, 252, 1, 1, 1, 1, 1, 0]), "{:?}", &bytes[bytes.len() - 16..]);
    // 504 values at 8 a word = 63 words, then 2 scales.
    assert!(bytes.windows(3).any(|w| w == [251, 252, 0]), "the bytes' length 63 * 4 + 8 = 260 is a u16 varint");
    let back = from_bytes(&bytes, Format::Bin, Some(&record(q.clone()))).unwrap();
    same(loaded(&back), &q);
}

#[test]
fn named_mpk_golden_dtype() {
    let bytes = to_bytes(&record(burn_q8s()), Format::NamedMpk, Precision::Full).unwrap();
    let mut dtype = Vec::new();
    mpk_str(&mut dtype, "dtype");
    dtype.push(0x81);
    mpk_str(&mut dtype, "QFloat");
    dtype.push(0x85);
    for (k, v) in [("value", "Q8S"), ("param", "F32"), ("store", "Native"), ("level", "Tensor"), ("mode", "Symmetric")] {
        mpk_str(&mut dtype, k);
        mpk_str(&mut dtype, v);
    }
    let mut data = Vec::new();
    mpk_str(&mut data, "bytes");
    data.extend_from_slice(&[0xc4, 10, 0, 25, 51, 76, 102, 127]);
    data.extend_from_slice(&0.039_370_08f32.to_le_bytes());
    mpk_str(&mut data, "shape");
    data.extend_from_slice(&[0x92, 2, 3]);
    data.extend_from_slice(&dtype);
    assert!(bytes.windows(data.len()).any(|w| w == data.as_slice()), "TensorData not found in {bytes:?}");
}

#[test]
fn json_golden_block_scheme() {
    let x = Tensor::from_vec(vec![0.5f32, -1.0, 0.25, 2.0], &[2, 2]).unwrap();
    let q = QTensor::quantize_dynamic(&x, &scheme(QuantValue::Q4S, QuantLevel::Block(vec![2]), QuantParam::F16)).unwrap();
    let text = String::from_utf8(to_bytes(&record(q.clone()), Format::PrettyJson, Precision::Full).unwrap()).unwrap();
    let compact: String = text.split_whitespace().collect();
    let want = r#""dtype":{"QFloat":{"value":"Q4S","param":"F16","store":{"PackedU32":0},"level":{"Block":{"storage":[2,1,1,1,1],"len":1}},"mode":"Symmetric"}}"#;
    assert!(compact.contains(want), "{compact}");
    // One word of 4 values, two scales: 12 bytes. Scales 1/7 and 2/7 in f16 precision, stored as f32.
    let s0 = half::f16::from_f32(2.0 * 1.0 / 14.0).to_f32();
    assert_eq!(q.raw_scales()[0], s0);
    same(loaded(&from_bytes(text.as_bytes(), Format::PrettyJson, None).unwrap()), &q);
}

#[test]
fn every_format_round_trips_against_either_schema() {
    let x = Tensor::from_vec((0..24).map(|i| (i as f32 * 0.7).sin()).collect::<Vec<f32>>(), &[4, 6]).unwrap();
    for s in [
        scheme(QuantValue::Q8S, QuantLevel::Tensor, QuantParam::F32),
        scheme(QuantValue::Q8F, QuantLevel::Block(vec![6]), QuantParam::F32),
        scheme(QuantValue::Q4F, QuantLevel::Block(vec![2, 3]), QuantParam::BF16),
        scheme(QuantValue::Q2S, QuantLevel::Tensor, QuantParam::F16),
    ] {
        let q = QTensor::quantize_dynamic(&x, &s).unwrap();
        let float_schema = Item::Struct(vec![(
            "w".into(),
            Item::Struct(vec![("id".into(), Item::Str(String::new())), ("param".into(), Item::tensor(x.clone()))]),
        )]);
        for format in FORMATS {
            let bytes = to_bytes(&record(q.clone()), format, Precision::Full).unwrap();
            for schema in [Some(record(q.clone())), Some(float_schema.clone()), None] {
                if schema.is_none() && matches!(format, Format::Bin | Format::BinGz | Format::BinBytes) {
                    continue;
                }
                let back = from_bytes(&bytes, format, schema.as_ref()).unwrap_or_else(|e| panic!("{format:?} {s:?}: {e}"));
                same(loaded(&back), &q);
            }
        }
    }
}

#[test]
fn a_float_record_loads_into_a_quantized_schema_as_floats() {
    let x = Tensor::from_vec(vec![1.0f32, -2.0, 3.0, 0.5], &[2, 2]).unwrap();
    let float_record = Item::Struct(vec![(
        "w".into(),
        Item::Struct(vec![("id".into(), Item::Str("0400000000000".into())), ("param".into(), Item::tensor(x.clone()))]),
    )]);
    let q = QTensor::quantize_dynamic(&x, &scheme(QuantValue::Q8S, QuantLevel::Tensor, QuantParam::F32)).unwrap();
    for format in [Format::NamedMpk, Format::Bin, Format::PrettyJson] {
        let bytes = to_bytes(&float_record, format, Precision::Half).unwrap();
        let back = from_bytes(&bytes, format, Some(&record(q.clone()))).unwrap();
        match back.field("w").and_then(|w| w.field("param")) {
            Some(Item::Tensor(t)) => assert_eq!(t.to_vec::<f32>(), vec![1.0, -2.0, 3.0, 0.5]),
            other => panic!("{format:?}: expected floats, found {other:?}"),
        }
    }
    // A quantized record of another shape is refused, naming the parameter.
    let other = QTensor::quantize_dynamic(&Tensor::from_vec(vec![1.0f32; 6], &[3, 2]).unwrap(), q.scheme()).unwrap();
    for format in [Format::NamedMpk, Format::Bin] {
        let bytes = to_bytes(&record(other.clone()), format, Precision::Full).unwrap();
        let err = from_bytes(&bytes, format, Some(&record(q.clone()))).unwrap_err().to_string();
        assert!(err.contains("w.param") && err.contains("[3, 2]") && err.contains("[2, 2]"), "{err}");
    }
}

/// The MessagePack of one quantized parameter with `dtype` and `bytes` as given.
fn mpk_record(bytes: &[u8], shape: &[u64], scheme: Item) -> Vec<u8> {
    let data = Item::Struct(vec![
        ("bytes".into(), Item::Bytes(bytes.to_vec())),
        ("shape".into(), Item::Seq(shape.iter().map(|&d| Item::U64(d)).collect())),
        ("dtype".into(), Item::Struct(vec![("QFloat".into(), scheme)])),
    ]);
    let top = Item::Struct(vec![
        ("metadata".into(), Item::Struct(vec![])),
        ("item".into(), Item::Struct(vec![("w".into(), Item::Struct(vec![("id".into(), Item::Str("0400000000000".into())), ("param".into(), data)]))])),
    ]);
    super::mpk::to_bytes(&top).unwrap()
}

fn scheme_fields(fields: &[(&str, Item)]) -> Item {
    Item::Struct(fields.iter().map(|(k, v)| (k.to_string(), v.clone())).collect())
}

fn s(v: &str) -> Item {
    Item::Str(v.into())
}

fn q8s_fields() -> Vec<(&'static str, Item)> {
    vec![("value", s("Q8S")), ("param", s("F32")), ("store", s("Native")), ("level", s("Tensor")), ("mode", s("Symmetric"))]
}

fn load_err(bytes: &[u8]) -> String {
    from_bytes(bytes, Format::NamedMpk, None).map(|i| format!("loaded {i:?}")).unwrap_or_else(|e| e.to_string())
}

#[test]
fn damaged_quantized_data_is_refused_with_its_reason() {
    let scale = 0.5f32.to_le_bytes();
    let with_scales = |values: &[u8], n: usize| {
        let mut b = values.to_vec();
        (0..n).for_each(|_| b.extend_from_slice(&scale));
        b
    };
    let cases: Vec<(Vec<u8>, &[u64], Item, &str)> = vec![
        // Too short and too long for the values and one scale.
        (with_scales(&[1, 2, 3], 1)[..6].to_vec(), &[4], scheme_fields(&q8s_fields()), "take 8 bytes, found 6"),
        (with_scales(&[1, 2, 3, 4, 5], 1), &[4], scheme_fields(&q8s_fields()), "take 8 bytes, found 9"),
        // Two scales where the scheme has one per tensor.
        (with_scales(&[1, 2, 3, 4], 2), &[4], scheme_fields(&q8s_fields()), "room for 2 f32 scales; the scheme needs 1"),
        // Values outside the type's range: -128 is not Q8S.
        (with_scales(&[0x80, 0, 0, 0], 1), &[4], scheme_fields(&q8s_fields()), "-128 is outside Q8S's range"),
        // A shape whose element count overflows.
        (with_scales(&[1], 1), &[1 << 62, 1 << 3], scheme_fields(&q8s_fields()), "more elements than memory can hold"),
    ];
    let mut unknown = q8s_fields();
    unknown[0].1 = s("Q16");
    let mut float_values = q8s_fields();
    float_values[0].1 = s("E4M3");
    let mut e8m0 = q8s_fields();
    e8m0[1].1 = s("UE8M0");
    let mut extra = q8s_fields();
    extra.push(("acc", s("F32")));
    let mut missing = q8s_fields();
    missing.remove(4);
    let mut packed_dim = q8s_fields();
    packed_dim[2].1 = Item::Struct(vec![("PackedU32".into(), Item::U64(1))]);
    let mut packed_native = q8s_fields();
    packed_native[2].1 = Item::Struct(vec![("PackedNative".into(), Item::U64(0))]);
    let block = |storage: Vec<u64>, len: u64| {
        let mut f = q8s_fields();
        let b = Item::Struct(vec![("storage".into(), Item::Seq(storage.into_iter().map(Item::U64).collect())), ("len".into(), Item::U64(len))]);
        f[3].1 = Item::Struct(vec![("Block".into(), b)]);
        scheme_fields(&f)
    };
    let mut mode = q8s_fields();
    mode[4].1 = s("Asymmetric");
    let ok = with_scales(&[1, 2, 3, 4], 1);
    let more: Vec<(Vec<u8>, &[u64], Item, &str)> = vec![
        (ok.clone(), &[4], scheme_fields(&unknown), "unknown quantization value \"Q16\""),
        (ok.clone(), &[4], scheme_fields(&float_values), "E4M3 is not supported"),
        (ok.clone(), &[4], scheme_fields(&e8m0), "UE8M0 are not supported"),
        (ok.clone(), &[4], scheme_fields(&extra), "unknown field \"acc\""),
        (ok.clone(), &[4], scheme_fields(&missing), "no field \"mode\""),
        (ok.clone(), &[4], scheme_fields(&packed_dim), "packed along dim 1"),
        (ok.clone(), &[4], scheme_fields(&packed_native), "PackedNative"),
        (ok.clone(), &[4], scheme_fields(&mode), "unknown quantization mode \"Asymmetric\""),
        (ok.clone(), &[4], block(vec![3, 1, 1, 1, 1], 1), "does not split into blocks"),
        (ok.clone(), &[4], block(vec![2, 1, 1, 1, 1], 0), "a block has 1 to 5 dims"),
        (ok.clone(), &[4], block(vec![2, 1, 1, 1, 1], 6), "len must be an integer 0..=5"),
        (ok.clone(), &[4], block(vec![2, 1, 1, 1], 1), "storage holds 5 dims"),
        (ok.clone(), &[4], block(vec![300, 1, 1, 1, 1], 1), "a block dim must be an integer 0..=255"),
        (with_scales(&[1, 2, 3, 4], 0).into_iter().chain(f32::NAN.to_le_bytes()).collect(), &[4], scheme_fields(&q8s_fields()), "scales must be finite"),
        (ok.clone(), &[4], s("Q8S"), "the QFloat scheme must be a struct"),
    ];
    for (bytes, shape, scheme, want) in cases.into_iter().chain(more) {
        let err = load_err(&mpk_record(&bytes, shape, scheme.clone()));
        assert!(err.contains("w.param: quantized tensor:") && err.contains(want), "{scheme:?}: expected {want:?} in {err}");
    }
}

#[test]
fn damaged_bincode_schemes_are_refused() {
    let good = to_bytes(&record(burn_q8s()), Format::Bin, Precision::Full).unwrap();
    let schema = record(burn_q8s());
    let tail = good.len() - 5; // the value index, after the dtype index 14
    for (at, byte, want) in [
        (tail, 9u8, "unknown quantization value variant index 9"),
        (tail + 1, 5, "unknown quantization param variant index 5"),
        (tail + 2, 3, "unknown quantization store variant index 3"),
        (tail + 3, 2, "unknown quantization level variant index 2"),
        (tail + 4, 1, "unknown quantization mode variant index 1"),
        (tail, 2, "E4M3 is not supported"),
    ] {
        let mut bad = good.clone();
        bad[at] = byte;
        let err = from_bytes(&bad, Format::BinBytes, Some(&schema)).unwrap_err().to_string();
        assert!(err.contains("w.param") && err.contains(want), "{want}: {err}");
    }
    // Cut anywhere in the scheme: truncated, never a panic.
    for cut in tail - 1..good.len() {
        assert!(from_bytes(&good[..cut], Format::BinBytes, Some(&schema)).is_err());
    }
    // A Block level whose BlockSize is cut short.
    let mut block = good.clone();
    block[tail + 3] = 1;
    block.extend_from_slice(&[2, 1]);
    let err = from_bytes(&block, Format::BinBytes, Some(&schema)).unwrap_err().to_string();
    assert!(err.contains("truncated"), "{err}");
}

#[test]
fn fuzz_targets_take_quantized_records() {
    // The fuzz targets' round trip checks quantized tensors too.
    for format in [Format::NamedMpk, Format::PrettyJson] {
        let bytes = to_bytes(&record(burn_q8s()), format, Precision::Full).unwrap();
        let which = if format == Format::NamedMpk { 0u8 } else { 1 };
        let mut input = vec![which];
        input.extend_from_slice(&bytes);
        super::fuzz::self_describing(&input);
    }
}
