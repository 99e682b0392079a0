//! A team of threads that stays awake between parallel loops, and the
//! loops that run on it.
//!
//! Rayon parks an idle worker within microseconds, and a caller outside the
//! pool (the Python thread) sleeps until the pool has finished. On this kind
//! of machine (a VM whose idle vCPUs halt) each of those wake-ups costs
//! 50-200 us, so a 131K-element add split over rayon took 126 us after a
//! short pause in the caller against 33 us on one thread. Training loops
//! issue many such ops with a little Python in between. The team answers
//! that the way OpenMP runtimes do: the caller takes parts of the loop
//! itself and spins for the rest, and the helpers poll for the next loop
//! for [`LINGER`] before they park.
//!
//! The team is used from one caller at a time. Another caller, or a loop
//! started from inside a rayon worker or from a part of a team loop, runs on
//! rayon as before, so nothing waits on the team.

use std::cell::Cell;
use std::panic::{catch_unwind, AssertUnwindSafe};
use std::ptr;
use std::sync::atomic::{AtomicBool, AtomicPtr, AtomicU64, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex, OnceLock};
use std::thread::{self, Thread, ThreadId};
use std::time::{Duration, Instant};

use rayon::prelude::*;

use super::placement::{current_cpu, Placement};
use crate::interrupt;

/// How long a helper keeps polling for the next loop before it parks: long
/// enough to bridge the Python between two ops of a training step, short
/// enough that an idle process stops using the core at once.
const LINGER: Duration = Duration::from_millis(2);

/// Spins between looks at the clock (and at the CPU the caller is on)
/// while polling.
const SPINS: u32 = 64;

/// No CPU recorded.
const NO_CPU: usize = usize::MAX;

/// How the parts of a loop are handed out.
enum Claim {
    /// One shared counter: each thread takes the lowest part not yet taken.
    Next(AtomicUsize),
    /// One contiguous run of parts per thread (see [`run_bounds`]), each
    /// walked forward by its owner; a thread whose run is done takes parts
    /// from the back of the run with the most left.
    ///
    /// With parts handed out in index order the threads took turns along
    /// the buffer, so each thread's next part began where the other thread
    /// had been reading and its stream prefetch started over at every part.
    /// Summing 64 MiB in 256 KiB parts took 5-15% longer that way than with
    /// one forward stream per thread, and torch's sum (two contiguous
    /// halves) was 1.25x faster; with runs it is 1.1x (paired rounds).
    Runs(Box<[RunSlot]>),
}

/// One thread's run, `front << 32 | end`: the parts in `front..end` are
/// not taken yet. On its own cache line, as owners claim from their runs
/// all the time.
#[repr(align(64))]
struct RunSlot(AtomicU64);

/// Parts `lo..hi` of run `way` when `parts` parts are split into `ways` runs:
/// runs differ in length by at most one part, and cover `0..parts` in order.
fn run_bounds(parts: usize, ways: usize, way: usize) -> (usize, usize) {
    let (base, extra) = (parts / ways, parts % ways);
    let lo = way * base + way.min(extra);
    (lo, lo + base + usize::from(way < extra))
}

impl RunSlot {
    fn new((lo, hi): (usize, usize)) -> Self {
        RunSlot(AtomicU64::new((lo as u64) << 32 | hi as u64))
    }

    fn left(&self) -> u64 {
        let v = self.0.load(Ordering::Relaxed);
        (v & u64::from(u32::MAX)).saturating_sub(v >> 32)
    }

    /// Take the first part left (`front_end` true) or the last one.
    fn take(&self, front_end: bool) -> Option<usize> {
        let mut v = self.0.load(Ordering::Relaxed);
        loop {
            let (front, end) = (v >> 32, v & u64::from(u32::MAX));
            if front >= end {
                return None;
            }
            let (next, part) = if front_end { (v + (1 << 32), front) } else { (v - 1, end - 1) };
            match self.0.compare_exchange_weak(v, next, Ordering::Relaxed, Ordering::Relaxed) {
                Ok(_) => return Some(part as usize),
                Err(now) => v = now,
            }
        }
    }
}

impl Claim {
    /// Runs for `ways` threads when asked for and the part indices fit the
    /// packed slots, else the counter.
    fn new(parts: usize, ways: usize, runs: bool) -> Claim {
        if runs && ways > 1 && u32::try_from(parts).is_ok() {
            Claim::Runs((0..ways).map(|w| RunSlot::new(run_bounds(parts, ways, w))).collect())
        } else {
            Claim::Next(AtomicUsize::new(0))
        }
    }

    /// The next part for the thread working as `way` (0 for the caller,
    /// helper `i` as `i + 1`), or None when every part is taken.
    fn next(&self, parts: usize, way: usize) -> Option<usize> {
        match self {
            Claim::Next(next) => Some(next.fetch_add(1, Ordering::Relaxed)).filter(|&i| i < parts),
            Claim::Runs(runs) => runs[way % runs.len()].take(true).or_else(|| loop {
                let (fullest, left) = runs.iter().enumerate().map(|(w, r)| (w, r.left())).max_by_key(|&(_, left)| left)?;
                if left == 0 {
                    return None;
                }
                if let Some(part) = runs[fullest].take(false) {
                    return Some(part);
                }
            }),
        }
    }
}

/// One loop: `parts` calls of `f`, claimed one at a time.
struct Job<'a> {
    f: &'a (dyn Fn(usize) + Sync),
    /// The interrupt token of the call the loop belongs to, so that kernels
    /// in parts run by helpers stop with it.
    token: Option<Arc<AtomicBool>>,
    parts: usize,
    claim: Claim,
    done: AtomicUsize,
    panicked: AtomicBool,
    /// The thread that started the loop, and the parts other threads ran.
    caller: ThreadId,
    by_others: AtomicUsize,
}

impl Job<'_> {
    /// Claim and run parts until none is left.
    ///
    /// The interrupt token is set once per call, and the parts run are
    /// counted once at the end: per part, the token's reference count and
    /// the shared counters were atomics written by every thread in turn,
    /// and with small parts that traffic cost more than the parts
    /// (sum_dim(-1) of [1K, 1K] spent a quarter of its time on it).
    fn work(&self, way: usize) {
        let other = thread::current().id() != self.caller;
        let ran = interrupt::working_for(self.token.as_ref(), || {
            let mut ran = 0;
            loop {
                let Some(i) = self.claim.next(self.parts, way) else {
                    return ran;
                };
                // A panicking part still counts as done so that the caller's
                // wait ends; the caller re-raises it.
                if catch_unwind(AssertUnwindSafe(|| (self.f)(i))).is_err() {
                    self.panicked.store(true, Ordering::Relaxed);
                }
                ran += 1;
            }
        });
        if ran > 0 {
            // Counted before `done`, which the caller waits on.
            if other {
                self.by_others.fetch_add(ran, Ordering::Relaxed);
            }
            self.done.fetch_add(ran, Ordering::Release);
        }
    }
}

struct Helper {
    thread: Thread,
    parked: AtomicBool,
    /// The CPU the helper was last seen on, or [`NO_CPU`].
    cpu: AtomicUsize,
}

struct Team {
    /// Held by the one caller using the team.
    busy: Mutex<()>,
    /// Bumped for every loop; helpers watch it.
    epoch: AtomicU64,
    /// The current loop, or null between loops. Type-erased `*const Job`.
    job: AtomicPtr<()>,
    /// Helpers that may be looking at `job`.
    active: AtomicUsize,
    /// The CPU the last caller started its loop on, or [`NO_CPU`].
    caller_cpu: AtomicUsize,
    helpers: OnceLock<Vec<Helper>>,
}

static TEAM: Team = Team {
    busy: Mutex::new(()),
    epoch: AtomicU64::new(0),
    job: AtomicPtr::new(ptr::null_mut()),
    active: AtomicUsize::new(0),
    caller_cpu: AtomicUsize::new(NO_CPU),
    helpers: OnceLock::new(),
};

thread_local! {
    /// Whether this thread is inside a part of a team loop (a helper, or the
    /// caller while it works).
    static IN_TEAM: Cell<bool> = const { Cell::new(false) };
    /// Parts of this thread's last loop that other threads ran.
    static LAST_BY_OTHERS: Cell<usize> = const { Cell::new(0) };
}

/// How many parts of the calling thread's last [`for_each_part`] loop other
/// threads ran: 0 means the loop ran on the calling thread alone. For tests
/// that check a large loop is shared, as a single-core run would still give
/// right answers.
pub fn last_loop_parts_by_others() -> usize {
    LAST_BY_OTHERS.with(Cell::get)
}

/// The helpers, started on first use: one fewer than rayon's threads, since
/// the caller works too. None when they cannot be started.
fn helpers() -> &'static [Helper] {
    TEAM.helpers.get_or_init(|| {
        (1..rayon::current_num_threads())
            .map_while(|i| {
                thread::Builder::new()
                    .name(format!("ferrum-team-{i}"))
                    .spawn(move || helper_loop(i - 1))
                    .ok()
                    .map(|h| Helper { thread: h.thread().clone(), parked: AtomicBool::new(false), cpu: AtomicUsize::new(NO_CPU) })
            })
            .collect()
    })
}

/// Helper `index` (into [`helpers`]): wait for loops and work on them.
fn helper_loop(index: usize) {
    IN_TEAM.with(|t| t.set(true));
    let placement = Placement::of_current_thread();
    let mut seen = TEAM.epoch.load(Ordering::Acquire);
    loop {
        seen = wait_for_loop(seen, index, &placement);
        TEAM.active.fetch_add(1, Ordering::SeqCst);
        let job = TEAM.job.load(Ordering::SeqCst) as *const Job<'static>;
        if !job.is_null() {
            keep_apart(index, &placement);
            // SAFETY: the caller keeps the job alive until `active` drops to
            // zero after it has cleared `job` (see `run`); this helper
            // counted itself in `active` before reading `job`.
            unsafe { (*job).work(index + 1) };
        }
        TEAM.active.fetch_sub(1, Ordering::SeqCst);
    }
}

/// Move helper `index` off the CPU of the caller and of the helpers before
/// it, when it shares one with them (see [`placement`](super::placement)).
fn keep_apart(index: usize, placement: &Placement) {
    let Some(mut cpu) = current_cpu() else { return };
    let helpers = helpers();
    let before = &helpers[..index.min(helpers.len())];
    let caller = TEAM.caller_cpu.load(Ordering::Relaxed);
    if cpu == caller || before.iter().any(|h| h.cpu.load(Ordering::Relaxed) == cpu) {
        let taken: Vec<usize> = before.iter().map(|h| h.cpu.load(Ordering::Relaxed)).chain([caller]).collect();
        placement.avoid(&taken);
        cpu = current_cpu().unwrap_or(cpu);
    }
    if let Some(me) = helpers.get(index) {
        me.cpu.store(cpu, Ordering::Relaxed);
    }
}

/// Poll for an epoch after `seen`, parking after [`LINGER`] without one.
/// Spinning does not offer the core to other threads: a spinning thread
/// that yields still looks busy to the scheduler, and the one thread it
/// could let in, the caller stacked on its CPU, is better moved away from
/// ([`keep_apart`]).
fn wait_for_loop(seen: u64, index: usize, placement: &Placement) -> u64 {
    let mut deadline = Instant::now() + LINGER;
    loop {
        for _ in 0..SPINS {
            let epoch = TEAM.epoch.load(Ordering::Acquire);
            if epoch != seen {
                return epoch;
            }
            std::hint::spin_loop();
        }
        if Instant::now() < deadline {
            keep_apart(index, placement);
            continue;
        }
        let Some(helper) = helpers().get(index) else { return seen };
        helper.parked.store(true, Ordering::SeqCst);
        // Re-check after announcing the park: a caller that bumped the epoch
        // before seeing `parked` would not unpark us.
        if TEAM.epoch.load(Ordering::SeqCst) == seen {
            thread::park();
        }
        helper.parked.store(false, Ordering::SeqCst);
        deadline = Instant::now() + LINGER;
    }
}

/// Run `f(i)` for every `i` in `0..parts`, split across threads: the caller
/// and the team, or rayon when the team is taken or the caller is already
/// one of the pool's or the team's threads. Parts run in any order and
/// concurrently; each runs once. A panic in a part is re-raised here after
/// every part has finished.
pub fn for_each_part(parts: usize, f: impl Fn(usize) + Sync) {
    team_loop(parts, false, f);
}

/// [`for_each_part`] for loops that stream through memory in part order:
/// the parts are split into one contiguous run per thread, each thread
/// walks its run forward, and a thread done with its run takes parts from
/// the back of the others' (see [`Claim::Runs`]).
pub fn for_each_part_in_runs(parts: usize, f: impl Fn(usize) + Sync) {
    team_loop(parts, true, f);
}

fn team_loop(parts: usize, runs: bool, f: impl Fn(usize) + Sync) {
    if parts <= 1 {
        LAST_BY_OTHERS.with(|c| c.set(0));
        (0..parts).for_each(f);
        return;
    }
    let nested = IN_TEAM.with(Cell::get) || rayon::current_thread_index().is_some();
    let guard = if nested { None } else { TEAM.busy.try_lock().ok() };
    let helpers = if guard.is_some() { helpers() } else { &[] };
    let token = interrupt::token();
    let caller = thread::current().id();
    if helpers.is_empty() {
        let by_others = AtomicUsize::new(0);
        (0..parts).into_par_iter().for_each(|i| {
            interrupt::working_for(token.as_ref(), || f(i));
            if thread::current().id() != caller {
                by_others.fetch_add(1, Ordering::Relaxed);
            }
        });
        LAST_BY_OTHERS.with(|c| c.set(by_others.into_inner()));
        return;
    }
    let job = Job {
        f: &f,
        token,
        parts,
        claim: Claim::new(parts, helpers.len() + 1, runs),
        done: AtomicUsize::new(0),
        panicked: AtomicBool::new(false),
        caller,
        by_others: AtomicUsize::new(0),
    };
    run(&job, helpers);
    drop(guard);
    LAST_BY_OTHERS.with(|c| c.set(job.by_others.load(Ordering::Relaxed)));
    if job.panicked.load(Ordering::Relaxed) {
        panic!("a part of a parallel loop panicked");
    }
}

/// Publish `job` to the helpers, work on it, and return once every part is
/// done and no helper can still reach it.
fn run(job: &Job<'_>, helpers: &[Helper]) {
    TEAM.caller_cpu.store(current_cpu().unwrap_or(NO_CPU), Ordering::Relaxed);
    TEAM.job.store(job as *const Job<'_> as *mut (), Ordering::SeqCst);
    TEAM.epoch.fetch_add(1, Ordering::SeqCst);
    for h in helpers {
        if h.parked.load(Ordering::SeqCst) {
            h.thread.unpark();
        }
    }
    IN_TEAM.with(|t| t.set(true));
    job.work(0);
    IN_TEAM.with(|t| t.set(false));
    spin_until(|| job.done.load(Ordering::Acquire) >= job.parts);
    // A helper that counts itself in `active` after this store reads null.
    TEAM.job.store(ptr::null_mut(), Ordering::SeqCst);
    spin_until(|| TEAM.active.load(Ordering::SeqCst) == 0);
}

/// Spin until `ready`, offering the core to others now and then: what is
/// left is at most one part per helper, or a helper leaving a finished job.
fn spin_until(ready: impl Fn() -> bool) {
    while !ready() {
        for _ in 0..SPINS {
            std::hint::spin_loop();
        }
        if !ready() {
            thread::yield_now();
        }
    }
}

/// A pointer that the parts of one loop share, each to reach its own
/// piece (or to read what none of them writes).
pub struct Shared<T>(pub *mut T);
impl<T> Clone for Shared<T> {
    fn clone(&self) -> Self {
        *self
    }
}
impl<T> Copy for Shared<T> {}
// SAFETY: users hand it only to parts that write disjoint pieces through it
// (see `for_each_chunk_mut`) or only read through it.
unsafe impl<T: Send> Send for Shared<T> {}
// SAFETY: as above.
unsafe impl<T: Send> Sync for Shared<T> {}

/// [`for_each_part`] when `threaded`; otherwise every part in order on the
/// calling thread.
pub fn for_each_part_if(threaded: bool, parts: usize, f: impl Fn(usize) + Sync) {
    if threaded {
        for_each_part(parts, f);
    } else {
        (0..parts).for_each(f);
    }
}

/// Run `f(i, piece)` over the `chunk`-element pieces of `dst` (the last may
/// be shorter), split across threads as [`for_each_part_in_runs`]: each
/// thread walks one stretch of `dst` (and of whatever inputs its pieces
/// read) forward.
pub fn for_each_chunk_mut<T: Send>(dst: &mut [T], chunk: usize, f: impl Fn(usize, &mut [T]) + Sync) {
    let (len, base) = (dst.len(), Shared(dst.as_mut_ptr()));
    let chunk = chunk.max(1);
    for_each_part_in_runs(len.div_ceil(chunk), move |i| {
        let base = base;
        let start = i * chunk;
        let end = (start + chunk).min(len);
        // SAFETY: pieces [start, end) of distinct parts are disjoint and lie
        // inside `dst`, which the caller borrows mutably for the whole loop.
        let piece = unsafe { std::slice::from_raw_parts_mut(base.0.add(start), end - start) };
        f(i, piece)
    });
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_part_runs_once() {
        for parts in [0, 1, 2, 3, 17, 1000] {
            let hits: Vec<AtomicUsize> = (0..parts).map(|_| AtomicUsize::new(0)).collect();
            for_each_part(parts, |i| {
                hits[i].fetch_add(1, Ordering::Relaxed);
            });
            assert!(hits.iter().all(|h| h.load(Ordering::Relaxed) == 1), "parts = {parts}");
        }
    }

    #[test]
    fn runs_split_the_parts_in_order() {
        // Up to a simulated 16-thread team: contiguous, in order, lengths
        // within one part of each other.
        for ways in [1, 2, 3, 16] {
            for parts in [0, 1, 5, 16, 17, 1000] {
                let bounds: Vec<_> = (0..ways).map(|w| run_bounds(parts, ways, w)).collect();
                assert_eq!(bounds[0].0, 0);
                assert_eq!(bounds[ways - 1].1, parts);
                assert!(bounds.windows(2).all(|b| b[0].1 == b[1].0), "{ways} ways, {parts} parts: {bounds:?}");
                let lens: Vec<_> = bounds.iter().map(|(lo, hi)| hi - lo).collect();
                assert!(lens.iter().max().unwrap() - lens.iter().min().unwrap() <= 1, "{lens:?}");
            }
        }
    }

    #[test]
    fn a_thread_alone_takes_its_run_forward_then_the_others_from_the_back() {
        // One thread claiming for a simulated 16-thread team whose helpers
        // never came: its own run in order, then every other run back to front,
        // the fullest first.
        let (parts, ways) = (100, 16);
        let claim = Claim::new(parts, ways, true);
        let order: Vec<usize> = std::iter::from_fn(|| claim.next(parts, 0)).collect();
        let mut sorted = order.clone();
        sorted.sort_unstable();
        assert_eq!(sorted, (0..parts).collect::<Vec<_>>(), "each part once");
        let (lo, hi) = run_bounds(parts, ways, 0);
        assert_eq!(order[..hi - lo], (lo..hi).collect::<Vec<_>>());
        // The first steal is the last part of a longest other run.
        let longest = (1..ways).map(|w| run_bounds(parts, ways, w)).max_by_key(|(lo, hi)| hi - lo).unwrap();
        assert_eq!(order[hi - lo], longest.1 - 1);
        // Helper 3 (way 4) starting late begins at the front of its own run.
        let claim = Claim::new(parts, ways, true);
        assert_eq!(claim.next(parts, 4), Some(run_bounds(parts, ways, 4).0));
    }

    #[test]
    fn runs_give_every_part_once_under_contention() {
        for parts in [2, 3, 17, 1000, 100_000] {
            let hits: Vec<AtomicUsize> = (0..parts).map(|_| AtomicUsize::new(0)).collect();
            for_each_part_in_runs(parts, |i| {
                hits[i].fetch_add(1, Ordering::Relaxed);
            });
            assert!(hits.iter().all(|h| h.load(Ordering::Relaxed) == 1), "parts = {parts}");
            // Four threads claiming from one 4-way job at once.
            let claim = Claim::new(parts, 4, true);
            let hits: Vec<AtomicUsize> = (0..parts).map(|_| AtomicUsize::new(0)).collect();
            std::thread::scope(|s| {
                for way in 0..4 {
                    let (claim, hits) = (&claim, &hits);
                    s.spawn(move || {
                        while let Some(i) = claim.next(parts, way) {
                            hits[i].fetch_add(1, Ordering::Relaxed);
                        }
                    });
                }
            });
            assert!(hits.iter().all(|h| h.load(Ordering::Relaxed) == 1), "4 threads, parts = {parts}");
        }
    }

    #[test]
    fn a_slow_thread_s_run_is_finished_by_the_others() {
        // The caller stalls on each of its parts; the helper finishes its own
        // run and then takes most of the caller's from the back.
        if rayon::current_num_threads() < 2 {
            return;
        }
        let caller = thread::current().id();
        let parts = 64;
        let hits: Vec<AtomicUsize> = (0..parts).map(|_| AtomicUsize::new(0)).collect();
        for_each_part_in_runs(parts, |i| {
            if thread::current().id() == caller {
                thread::sleep(Duration::from_millis(2));
            }
            hits[i].fetch_add(1, Ordering::Relaxed);
        });
        assert!(hits.iter().all(|h| h.load(Ordering::Relaxed) == 1));
        // Without stealing the helper would run exactly its own run (half).
        // The team can be taken by a concurrent test, which sends the loop to
        // rayon; either way the slow caller must not be left most of the parts.
        assert!(last_loop_parts_by_others() > parts / 2, "others ran {}", last_loop_parts_by_others());
    }

    #[test]
    fn chunks_cover_the_slice() {
        let mut v = vec![0usize; 10_007];
        for_each_chunk_mut(&mut v, 1000, |i, piece| {
            assert!(piece.len() == 1000 || i == 10);
            piece.iter_mut().enumerate().for_each(|(j, x)| *x = i * 1000 + j);
        });
        assert!(v.iter().enumerate().all(|(k, &x)| x == k));
    }

    #[test]
    fn nested_and_concurrent_loops_finish() {
        // Loops inside parts, and loops from several threads at once, take
        // the rayon path instead of waiting on the team.
        let total = AtomicUsize::new(0);
        std::thread::scope(|s| {
            for _ in 0..4 {
                s.spawn(|| {
                    for _ in 0..50 {
                        for_each_part(8, |_| {
                            for_each_part(4, |_| {
                                total.fetch_add(1, Ordering::Relaxed);
                            })
                        });
                    }
                });
            }
        });
        assert_eq!(total.load(Ordering::Relaxed), 4 * 50 * 8 * 4);
    }

    #[test]
    fn loops_after_a_pause_find_parked_helpers() {
        for pause_ms in [0, 5] {
            std::thread::sleep(Duration::from_millis(pause_ms));
            let sum = AtomicUsize::new(0);
            for_each_part(64, |i| {
                sum.fetch_add(i, Ordering::Relaxed);
            });
            assert_eq!(sum.load(Ordering::Relaxed), 64 * 63 / 2);
        }
    }

    #[test]
    fn a_panicking_part_is_reraised_after_the_others_finish() {
        let ran = AtomicUsize::new(0);
        let caught = catch_unwind(AssertUnwindSafe(|| {
            for_each_part(16, |i| {
                ran.fetch_add(1, Ordering::Relaxed);
                assert!(i != 7, "part 7 fails");
            })
        }));
        assert!(caught.is_err());
        assert_eq!(ran.load(Ordering::Relaxed), 16);
        // The team is usable afterwards.
        let n = AtomicUsize::new(0);
        for_each_part(4, |_| {
            n.fetch_add(1, Ordering::Relaxed);
        });
        assert_eq!(n.load(Ordering::Relaxed), 4);
    }
}
