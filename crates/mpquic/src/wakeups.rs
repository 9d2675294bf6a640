//! Wake-ups raised during the driver's round are deferred until its datagrams have left.
//!
//! The driver turns the core's events into wake-ups of the application's tasks while it holds the
//! endpoint (`State::process`). On a multi-threaded runtime waking a task can unpark another
//! worker thread (a futex call) right then, and that worker's task then waits for the lock the
//! driver still holds; meanwhile the datagrams the round produced (a server's handshake flight,
//! an ACK) wait for both. Measured with the load test's server on a single-threaded runtime,
//! where no wake-up crosses threads: one handshake at a time went from about 1,540 to 1,790 per
//! second. So during a round the wake-ups are collected; the driver sends, then wakes them.
//!
//! The collection is per thread: the round is synchronous (it cannot move to another thread
//! half-way), and a task on another thread waking a waker meanwhile wakes it at once.

use std::cell::RefCell;
use std::marker::PhantomData;
use std::task::Waker;

thread_local! {
    /// The wake-ups of the round running on this thread, if one is.
    static DEFERRED: RefCell<Option<Vec<Waker>>> = const { RefCell::new(None) };
}

/// Wake `waker` now, or when the round running on this thread has sent its datagrams.
pub(crate) fn wake(waker: Waker) {
    let now = DEFERRED.with_borrow_mut(|deferred| match deferred {
        Some(list) => {
            list.push(waker);
            None
        }
        None => Some(waker),
    });
    // Outside the borrow: a waker may run code that wakes others.
    if let Some(waker) = now {
        waker.wake();
    }
}

/// The driver's round on this thread: wake-ups are collected until [`Deferral::finish`]. Not
/// `Send`, so it cannot be held across an `.await` (which may resume on another thread).
pub(crate) struct Deferral {
    _this_thread: PhantomData<*const ()>,
}

impl Deferral {
    /// Start collecting into `list` (emptied; its allocation is reused round after round). A
    /// round never runs inside another; if one did, it would add to the running collection and
    /// the first `finish` would take all of it: every wake-up is still made once, none dropped.
    pub(crate) fn start(mut list: Vec<Waker>) -> Self {
        list.clear();
        DEFERRED.with_borrow_mut(|deferred| {
            deferred.get_or_insert(list);
        });
        Self {
            _this_thread: PhantomData,
        }
    }

    /// Stop collecting; returns the wake-ups to make once the datagrams are sent.
    pub(crate) fn finish(self) -> Vec<Waker> {
        let list = DEFERRED.with_borrow_mut(Option::take).unwrap_or_default();
        std::mem::forget(self);
        list
    }
}

impl Drop for Deferral {
    /// Only when the round did not finish (a panic): nothing collected may be lost, and this
    /// thread must not defer other tasks' wake-ups.
    fn drop(&mut self) {
        if let Some(list) = DEFERRED.with_borrow_mut(Option::take) {
            list.into_iter().for_each(Waker::wake);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::atomic::{AtomicUsize, Ordering};
    use std::sync::Arc;
    use std::task::Wake;

    struct Counter(AtomicUsize);

    impl Wake for Counter {
        fn wake(self: Arc<Self>) {
            self.0.fetch_add(1, Ordering::SeqCst);
        }
    }

    fn counter() -> (Arc<Counter>, Waker) {
        let c = Arc::new(Counter(AtomicUsize::new(0)));
        (c.clone(), Waker::from(c))
    }

    #[test]
    fn wakes_at_once_outside_a_round_and_later_inside_one() {
        let (c, w) = counter();
        wake(w.clone());
        assert_eq!(c.0.load(Ordering::SeqCst), 1);
        let round = Deferral::start(Vec::new());
        wake(w.clone());
        wake(w.clone());
        assert_eq!(c.0.load(Ordering::SeqCst), 1, "deferred during the round");
        let later = round.finish();
        assert_eq!(later.len(), 2);
        // After the round this thread wakes at once again.
        wake(w);
        assert_eq!(c.0.load(Ordering::SeqCst), 2);
        later.into_iter().for_each(Waker::wake);
        assert_eq!(c.0.load(Ordering::SeqCst), 4);
    }

    #[test]
    fn an_unfinished_round_wakes_what_it_collected() {
        let (c, w) = counter();
        let result = std::panic::catch_unwind(|| {
            let _round = Deferral::start(Vec::new());
            wake(w.clone());
            panic!("the round failed");
        });
        assert!(result.is_err());
        assert_eq!(c.0.load(Ordering::SeqCst), 1);
        wake(w);
        assert_eq!(c.0.load(Ordering::SeqCst), 2, "no longer deferring");
    }
}
