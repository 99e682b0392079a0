//! The fuzz targets of `ferrum_core::record::fuzz`, bounded for the test
//! command: every seed (`fuzz/corpus/<target>/`) and every crasher ever found
//! (`fuzz/regressions/<target>/`) is replayed, then each target runs a few
//! seconds of random mutations of them. The long, coverage-guided campaign is
//! `bash fuzz/run.sh` (cargo fuzz); see fuzz/README.md.
//!
//! `FERRUM_FUZZ_SECONDS` sets the mutation time per target (default 2; 0
//! replays only) and `FERRUM_FUZZ_SEED` the random seed (default: the clock,
//! printed). A panicking input is written to `fuzz/artifacts/<target>/`.

use std::fs;
use std::io::{Read, Write};
use std::panic::{self, AssertUnwindSafe};
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};

use ferrum_core::record::fuzz::{Target, TARGETS};

fn fuzz_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../../fuzz")
}

fn inputs(folder: &Path) -> Vec<(PathBuf, Vec<u8>)> {
    let Ok(entries) = fs::read_dir(folder) else { return Vec::new() };
    let mut files: Vec<_> = entries.flatten().map(|e| e.path()).filter(|p| p.is_file()).collect();
    files.sort();
    files.into_iter().map(|p| (p.clone(), fs::read(&p).unwrap_or_else(|e| panic!("{}: {e}", p.display())))).collect()
}

/// Run `target` on `data`; a panic becomes the message, with the input saved for replay.
fn check(name: &str, target: Target, data: &[u8]) -> Result<(), String> {
    let outcome = panic::catch_unwind(AssertUnwindSafe(|| target(data)));
    outcome.map_err(|cause| {
        let what = cause
            .downcast_ref::<String>()
            .cloned()
            .or_else(|| cause.downcast_ref::<&str>().map(|s| s.to_string()))
            .unwrap_or_default();
        let folder = fuzz_dir().join("artifacts").join(name);
        let _ = fs::create_dir_all(&folder);
        let file = folder.join(format!("crash-{:016x}", fnv(data)));
        let _ = fs::write(&file, data);
        format!("{name} panicked ({what}) on the input saved at {}", file.display())
    })
}

/// Run `body` on a thread with room for a record nested to the depth limit in
/// a debug build: a level takes about 20 KB of stack there (2.5 KB in release),
/// more than a test thread's 2 MB hold at 100 levels with a round trip.
fn with_stack(body: impl FnOnce() + Send + 'static) {
    let outcome = std::thread::Builder::new().stack_size(64 << 20).spawn(body).map(|t| t.join());
    match outcome {
        Ok(Ok(())) => {}
        Ok(Err(cause)) => panic::resume_unwind(cause),
        Err(e) => panic!("cannot start a test thread: {e}"),
    }
}

fn fnv(data: &[u8]) -> u64 {
    data.iter().fold(0xcbf2_9ce4_8422_2325u64, |h, b| (h ^ *b as u64).wrapping_mul(0x100_0000_01b3))
}

#[test]
fn every_seed_and_regression_input_replays() {
    with_stack(replay_all);
}

fn replay_all() {
    let mut failures = Vec::new();
    for (name, target) in TARGETS {
        let seeds = inputs(&fuzz_dir().join("corpus").join(name));
        assert!(!seeds.is_empty(), "no seeds for {name} in fuzz/corpus/{name}: run python fuzz/make_seeds.py");
        for (_, data) in seeds.iter().chain(&inputs(&fuzz_dir().join("regressions").join(name))) {
            failures.extend(check(name, target, data).err());
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}

/// xorshift64*: a small, seedable generator (the test must not depend on a fuzzing crate).
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        self.0.wrapping_mul(0x2545_f491_4f6c_dd1d)
    }

    fn below(&mut self, n: usize) -> usize {
        if n == 0 { 0 } else { (self.next() % n as u64) as usize }
    }
}

/// Bytes that mean something to the parsers: MessagePack markers (nil, arrays,
/// maps, bin/str of each width), bincode varint prefixes, gzip's magic.
const INTERESTING: [&[u8]; 14] = [
    &[0xc0],
    &[0x90],
    &[0x80],
    &[0xdc, 0xff, 0xff],
    &[0xdd, 0xff, 0xff, 0xff, 0xff],
    &[0xdf, 0x7f, 0xff, 0xff, 0xff],
    &[0xc6, 0xff, 0xff, 0xff, 0xf0],
    &[0xdb, 0x00, 0x10, 0x00, 0x00],
    &[251, 0xff, 0xff],
    &[253, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0x3f],
    &[254],
    &[0x1f, 0x8b],
    b"[[[[[[[[",
    b"{\"bytes\":[",
];

fn mutate(rng: &mut Rng, data: &mut Vec<u8>, pool: &[Vec<u8>]) {
    let len = data.len();
    match rng.below(8) {
        0 if len > 0 => {
            let at = rng.below(len);
            data[at] ^= 1 << rng.below(8);
        }
        1 if len > 0 => {
            let at = rng.below(len);
            data[at] = [0, 1, 0x7f, 0x80, 0xff, 250, 251, 252, 253][rng.below(9)];
        }
        2 => {
            let at = rng.below(len + 1);
            let piece = INTERESTING[rng.below(INTERESTING.len())];
            data.splice(at..at, piece.iter().copied());
        }
        3 if len > 1 => {
            let from = rng.below(len);
            let to = (from + 1 + rng.below(16)).min(len);
            data.drain(from..to);
        }
        4 if len > 1 => {
            // Repeat a slice: deeper nesting, longer lists.
            let from = rng.below(len);
            let to = (from + 1 + rng.below(32)).min(len);
            let piece: Vec<u8> = data[from..to].to_vec();
            for _ in 0..1 + rng.below(8) {
                data.splice(from..from, piece.iter().copied());
            }
        }
        5 if !pool.is_empty() => {
            // Splice in part of another input.
            let other = &pool[rng.below(pool.len())];
            let from = rng.below(other.len());
            let to = (from + 1 + rng.below(64)).min(other.len());
            let at = rng.below(len + 1);
            data.splice(at..at, other[from..to].iter().copied());
        }
        6 if len > 0 => {
            let at = rng.below(len);
            data.truncate(at);
        }
        _ if len > 0 => {
            let at = rng.below(len);
            data[at] = rng.next() as u8;
        }
        _ => data.push(rng.next() as u8),
    }
}

/// A record seed whose file (after the selector byte) is gzip is mutated inside
/// the stream and compressed again, or the mutations would only break the CRC.
fn mutate_input(rng: &mut Rng, seed: &[u8], pool: &[Vec<u8>]) -> Vec<u8> {
    let rounds = 1 + rng.below(6);
    if seed.len() > 3 && seed[1..3] == [0x1f, 0x8b] && rng.below(4) != 0 {
        let mut inner = Vec::new();
        if flate2::read::GzDecoder::new(&seed[1..]).read_to_end(&mut inner).is_ok() {
            (0..rounds).for_each(|_| mutate(rng, &mut inner, pool));
            let mut enc = flate2::write::GzEncoder::new(vec![seed[0]], flate2::Compression::fast());
            if enc.write_all(&inner).is_ok() {
                if let Ok(out) = enc.finish() {
                    return out;
                }
            }
        }
    }
    let mut data = seed.to_vec();
    (0..rounds).for_each(|_| mutate(rng, &mut data, pool));
    data
}

#[test]
fn random_mutations_of_the_corpus_never_panic() {
    with_stack(mutate_all);
}

fn mutate_all() {
    let seconds: u64 = std::env::var("FERRUM_FUZZ_SECONDS").ok().and_then(|s| s.parse().ok()).unwrap_or(2);
    let seed = std::env::var("FERRUM_FUZZ_SEED").ok().and_then(|s| s.parse().ok()).unwrap_or_else(|| {
        SystemTime::now().duration_since(UNIX_EPOCH).map_or(1, |d| d.as_nanos() as u64) | 1
    });
    println!("FERRUM_FUZZ_SEED={seed}");
    let mut rng = Rng(seed);
    for (name, target) in TARGETS {
        let pool: Vec<Vec<u8>> = ["corpus", "regressions"]
            .iter()
            .flat_map(|kind| inputs(&fuzz_dir().join(kind).join(name)))
            .map(|(_, data)| data)
            .collect();
        assert!(!pool.is_empty(), "no seeds for {name}");
        let deadline = Instant::now() + Duration::from_secs(seconds);
        let mut runs = 0u64;
        while Instant::now() < deadline {
            let pick = rng.below(pool.len());
            let data = mutate_input(&mut rng, &pool[pick], &pool);
            if let Err(failure) = check(name, target, &data) {
                panic!("{failure} (FERRUM_FUZZ_SEED={seed}, after {runs} inputs)");
            }
            runs += 1;
        }
        println!("{name}: {runs} inputs in {seconds}s");
    }
}
