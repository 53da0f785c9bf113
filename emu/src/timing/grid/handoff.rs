//! Handing a round's job to a helper thread and back, fast enough for rounds of
//! tens of microseconds.
//!
//! A round of the threads (see `parallel`) lasts about as long as a unit takes to
//! reach the end of a window: at the sizes users run, 20-100 µs. Waking a parked
//! thread costs a futex call on each side and, on a virtual machine, the wake-up
//! of an idle virtual CPU; a channel's round trip measured 50-60 µs there, as long
//! as the round it serves, so a second thread gained nothing. Here each side waits
//! for the other by polling an atomic counter for a short while, the usual gap
//! between rounds, and only then parks; the other side's signal is a store and an
//! `unpark`, which costs no system call when nobody sleeps. A thread polls for at
//! most [`SPIN_US`] at a time, less after polls that came to nothing (see
//! [`Patience`]), so a thread with nothing to do sleeps, and on a machine busy
//! with other work the threads park as a channel's would.

use std::sync::atomic::{AtomicBool, AtomicU32, AtomicU64, Ordering};
use std::sync::{Mutex, MutexGuard, PoisonError};
use std::thread::{self, Thread};
use std::time::{Duration, Instant};

/// The longest a waiting thread polls before it parks, in microseconds.
const SPIN_US: u32 = 100;

/// One value passed back and forth between an owner thread and a helper: the
/// owner [`send`](Handoff::send)s it, the helper [`take`](Handoff::take)s it, works
/// and [`give_back`](Handoff::give_back)s it, the owner [`receive`](Handoff::receive)s it.
#[derive(Debug)]
pub struct Handoff<T> {
    /// Times the owner has sent.
    sent: AtomicU64,
    /// Times the helper has given back.
    returned: AtomicU64,
    /// The owner will send nothing more, or the helper has stopped (panicked).
    closed: AtomicBool,
    value: Mutex<Option<T>>,
    owner: Thread,
    helper: Mutex<Option<Thread>>,
    /// How long the owner, and the helper, poll before parking.
    owner_patience: Patience,
    helper_patience: Patience,
}

impl<T> Handoff<T> {
    /// A handoff owned by the calling thread.
    pub fn new() -> Self {
        Handoff {
            sent: AtomicU64::new(0),
            returned: AtomicU64::new(0),
            closed: AtomicBool::new(false),
            value: Mutex::new(None),
            owner: thread::current(),
            helper: Mutex::new(None),
            owner_patience: Patience::new(),
            helper_patience: Patience::new(),
        }
    }

    fn slot(&self) -> MutexGuard<'_, Option<T>> {
        // A panic while the lock was held leaves a value that is whole or absent.
        self.value.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// Owner: hands `value` to the helper.
    pub fn send(&self, value: T) {
        *self.slot() = Some(value);
        self.sent.fetch_add(1, Ordering::Release);
        self.wake_helper();
    }

    /// Owner: waits for the value sent last; `None` if the helper stopped first.
    pub fn receive(&self) -> Option<T> {
        let want = self.sent.load(Ordering::Relaxed);
        self.owner_patience.wait(|| {
            self.returned.load(Ordering::Acquire) == want || self.closed.load(Ordering::Acquire)
        });
        if self.returned.load(Ordering::Acquire) == want {
            self.slot().take()
        } else {
            None
        }
    }

    /// Owner: tells the helper that nothing more comes.
    pub fn close(&self) {
        self.closed.store(true, Ordering::Release);
        self.wake_helper();
    }

    /// Wakes the helper if it parked (the lock orders this against `attach`, so
    /// a helper that attaches later sees what was stored before).
    fn wake_helper(&self) {
        let helper = self.helper.lock().unwrap_or_else(PoisonError::into_inner);
        if let Some(helper) = helper.as_ref() {
            helper.unpark();
        }
    }

    /// Helper: registers the calling thread as the one to wake.
    pub fn attach(&self) {
        *self.helper.lock().unwrap_or_else(PoisonError::into_inner) = Some(thread::current());
    }

    /// Helper: waits for the next value; `None` once the owner has closed.
    pub fn take(&self) -> Option<T> {
        let have = self.returned.load(Ordering::Relaxed);
        self.helper_patience.wait(|| {
            self.sent.load(Ordering::Acquire) > have || self.closed.load(Ordering::Acquire)
        });
        if self.sent.load(Ordering::Acquire) > have {
            self.slot().take()
        } else {
            None
        }
    }

    /// Helper: gives the value back to the owner.
    pub fn give_back(&self, value: T) {
        *self.slot() = Some(value);
        self.returned.fetch_add(1, Ordering::Release);
        self.owner.unpark();
    }

    /// Helper: marks the handoff closed (from a guard when the helper unwinds), so
    /// that an owner waiting in [`receive`](Handoff::receive) wakes.
    pub fn abandon(&self) {
        self.closed.store(true, Ordering::Release);
        self.owner.unpark();
    }
}

/// How long one side polls before parking, adapted to what polling achieved:
/// a wait that ended while polling lengthens the next poll a little, a wait that
/// had to park halves it. On a busy machine, where the other thread often does
/// not run at all for a while, polling soon stops and both sides simply park
/// (polling there would only take the CPU from someone, perhaps the other thread).
#[derive(Debug)]
struct Patience(AtomicU32);

impl Patience {
    fn new() -> Self {
        Patience(AtomicU32::new(SPIN_US / 2))
    }

    /// Waits until `ready()`: polls it for up to the current patience, then parks
    /// between looks (each side unparks the other after changing what `ready`
    /// reads).
    fn wait(&self, ready: impl Fn() -> bool) {
        if ready() {
            return;
        }
        let patience = self.0.load(Ordering::Relaxed);
        let limit = Duration::from_micros(u64::from(patience));
        let start = Instant::now();
        let mut polls = 0u32;
        while !ready() {
            polls = polls.wrapping_add(1);
            if polls % 32 == 0 && start.elapsed() >= limit {
                self.0.store(patience / 2, Ordering::Relaxed);
                while !ready() {
                    thread::park();
                }
                return;
            }
            std::hint::spin_loop();
        }
        self.0
            .store((patience + SPIN_US / 16).min(SPIN_US), Ordering::Relaxed);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::Arc;

    #[test]
    fn values_go_back_and_forth_in_order() {
        let handoff = Arc::new(Handoff::<Vec<u64>>::new());
        let other = Arc::clone(&handoff);
        let helper = thread::spawn(move || {
            other.attach();
            while let Some(mut v) = other.take() {
                let next = v.last().copied().unwrap_or(0) + 1;
                v.push(next);
                other.give_back(v);
            }
        });
        let mut v = Vec::new();
        for round in 0..1000u64 {
            handoff.send(v);
            v = handoff.receive().expect("the helper is running");
            assert_eq!(v.len() as u64, round + 1);
            assert_eq!(v.last(), Some(&(round + 1)));
            if round % 100 == 0 {
                // Long enough for the helper to park.
                thread::sleep(Duration::from_millis(2));
            }
        }
        handoff.close();
        helper.join().expect("the helper ends when closed");
    }

    #[test]
    fn polling_shortens_after_waits_that_park_and_grows_back() {
        let patience = Patience::new();
        let start = patience.0.load(Ordering::Relaxed);
        let flag = Arc::new(AtomicBool::new(false));
        let setter = {
            let flag = Arc::clone(&flag);
            let waiter = thread::current();
            thread::spawn(move || {
                thread::sleep(Duration::from_millis(20));
                flag.store(true, Ordering::Release);
                waiter.unpark();
            })
        };
        patience.wait(|| flag.load(Ordering::Acquire));
        setter.join().expect("the setter returns");
        assert_eq!(patience.0.load(Ordering::Relaxed), start / 2);
        // Ready at once: no poll, no change.
        patience.wait(|| true);
        assert_eq!(patience.0.load(Ordering::Relaxed), start / 2);
        // Ready after a few polls: a little longer next time, never past the cap.
        for _ in 0..100 {
            let polls = std::cell::Cell::new(0);
            patience.wait(|| {
                polls.set(polls.get() + 1);
                polls.get() > 3
            });
        }
        assert_eq!(patience.0.load(Ordering::Relaxed), SPIN_US);
    }

    #[test]
    fn an_owner_waiting_on_a_helper_that_stopped_wakes() {
        let handoff = Arc::new(Handoff::<u32>::new());
        let other = Arc::clone(&handoff);
        let helper = thread::spawn(move || {
            other.attach();
            let _ = other.take();
            thread::sleep(Duration::from_millis(5));
            other.abandon();
        });
        handoff.send(1);
        assert_eq!(handoff.receive(), None);
        helper.join().expect("the helper returns");
    }
}
