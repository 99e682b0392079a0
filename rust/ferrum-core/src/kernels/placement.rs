//! Keeping the team's threads off the caller's CPU.
//!
//! A helper that spins between loops looks busy to the scheduler. On Linux
//! that makes a wake-up skip its search for an idle CPU (the search is cut
//! short when the last-level cache looks busy), so the caller returning
//! from a sleep, or a helper returning from its park, lands on the CPU of
//! the other one while a second CPU stays idle. The two then take turns
//! on one CPU for many milliseconds: `perf sched timehist` showed the
//! caller and the helper alternating on CPU 1 for 40 ms with CPU 0 idle,
//! and a third of 512^2 products ran at one core's speed. A helper that
//! finds itself on the caller's CPU therefore narrows its own affinity to
//! the CPUs the caller is not on, which moves it at once; where the caller
//! goes next, the helper follows the same rule.

/// The CPU the calling thread is running on, where the system says.
pub fn current_cpu() -> Option<usize> {
    #[cfg(target_os = "linux")]
    {
        // SAFETY: sched_getcpu takes no arguments and only reads.
        let cpu = unsafe { libc::sched_getcpu() };
        usize::try_from(cpu).ok()
    }
    #[cfg(not(target_os = "linux"))]
    {
        None
    }
}

/// The CPUs one thread may run on, read when the thread starts.
pub struct Placement {
    #[cfg(target_os = "linux")]
    allowed: Vec<usize>,
}

impl Placement {
    /// The calling thread's allowed CPUs.
    pub fn of_current_thread() -> Placement {
        #[cfg(target_os = "linux")]
        {
            // SAFETY: a zeroed cpu_set_t is a valid empty set, and the call
            // writes at most its size.
            let allowed = unsafe {
                let mut set: libc::cpu_set_t = std::mem::zeroed();
                if libc::sched_getaffinity(0, std::mem::size_of::<libc::cpu_set_t>(), &mut set) != 0
                {
                    Vec::new()
                } else {
                    (0..libc::CPU_SETSIZE as usize)
                        .filter(|&c| libc::CPU_ISSET(c, &set))
                        .collect()
                }
            };
            Placement { allowed }
        }
        #[cfg(not(target_os = "linux"))]
        {
            Placement {}
        }
    }

    /// Restrict the calling thread to its allowed CPUs other than `busy`,
    /// which moves it off `busy` at once. Does nothing when that leaves no
    /// CPU (one allowed CPU, or all of them busy) or the system refuses.
    pub fn avoid(&self, busy: &[usize]) {
        #[cfg(target_os = "linux")]
        {
            let free: Vec<usize> = self
                .allowed
                .iter()
                .copied()
                .filter(|c| !busy.contains(c))
                .collect();
            if free.is_empty() {
                return;
            }
            // SAFETY: as above; CPU_SET only writes bits below CPU_SETSIZE,
            // which every allowed CPU is.
            unsafe {
                let mut set: libc::cpu_set_t = std::mem::zeroed();
                for c in free {
                    libc::CPU_SET(c, &mut set);
                }
                libc::sched_setaffinity(0, std::mem::size_of::<libc::cpu_set_t>(), &set);
            }
        }
        #[cfg(not(target_os = "linux"))]
        {
            let _ = busy;
        }
    }
}

#[cfg(all(test, target_os = "linux"))]
mod tests {
    use super::*;

    #[test]
    fn a_thread_moves_off_a_busy_cpu() {
        std::thread::spawn(|| {
            let placement = Placement::of_current_thread();
            let Some(cpu) = current_cpu() else { return };
            if placement.allowed.len() < 2 {
                return;
            }
            placement.avoid(&[cpu]);
            assert_ne!(current_cpu(), Some(cpu), "still on cpu {cpu}");
            // Nothing left to move to: the thread stays where it may.
            placement.avoid(&placement.allowed);
            assert!(current_cpu().is_some_and(|c| placement.allowed.contains(&c)));
        })
        .join()
        .expect("the thread ran");
    }
}
