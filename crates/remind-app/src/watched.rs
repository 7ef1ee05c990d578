//! A shared snapshot with one owner that tells every watcher of each new version.
//!
//! The session owns its memory (and its unreadable rows) in a [`Watched`]; the page
//! watches it once and keeps what it hears in a signal. Watchers are added, never
//! swapped: a second watcher cannot silently cut off the first.

use std::cell::RefCell;
use std::rc::Rc;
use std::sync::Arc;

/// Told of every new snapshot.
type Watcher<T> = Rc<dyn Fn(Arc<T>)>;

/// The current snapshot of a `T` and everyone watching it. Readers clone the `Arc`,
/// never the value, and a change replaces the snapshot whole instead of mutating what
/// a reader holds.
pub struct Watched<T> {
    current: RefCell<Arc<T>>,
    watchers: RefCell<Vec<Watcher<T>>>,
}

impl<T> Watched<T> {
    pub fn new(value: T) -> Self {
        Watched {
            current: RefCell::new(Arc::new(value)),
            watchers: RefCell::new(Vec::new()),
        }
    }

    /// The snapshot as it is now; later changes do not alter it. Cheap (an `Arc` clone).
    pub fn get(&self) -> Arc<T> {
        self.current.borrow().clone()
    }

    /// Reads the current snapshot in place, for a query that needs no copy.
    pub fn with<R>(&self, read: impl FnOnce(&T) -> R) -> R {
        read(&self.current.borrow())
    }

    /// Replaces the snapshot and tells every watcher, in the order they began watching.
    pub fn replace(&self, value: T) {
        let snapshot = Arc::new(value);
        *self.current.borrow_mut() = snapshot.clone();
        // Both borrows are released before any watcher runs: a watcher may read the
        // snapshot again, or start another watch, without a re-entrant borrow panic.
        let watchers = self.watchers.borrow().clone();
        for watcher in watchers {
            watcher(snapshot.clone());
        }
    }

    /// Adds `watcher`, called with every later snapshot; those already watching stay.
    pub fn watch(&self, watcher: impl Fn(Arc<T>) + 'static) {
        self.watchers.borrow_mut().push(Rc::new(watcher));
    }
}

impl<T: Default> Default for Watched<T> {
    fn default() -> Self {
        Watched::new(T::default())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::cell::Cell;

    #[test]
    fn every_watcher_hears_each_new_snapshot() {
        let watched = Watched::new(0);
        let (first, second) = (Rc::new(Cell::new(0)), Rc::new(Cell::new(0)));
        let heard = first.clone();
        watched.watch(move |n| heard.set(*n));
        let heard = second.clone();
        watched.watch(move |n| heard.set(*n));

        watched.replace(7);

        assert_eq!((first.get(), second.get()), (7, 7));
        assert_eq!(*watched.get(), 7);
    }

    #[test]
    fn a_watcher_may_read_and_watch_again_while_it_is_told() {
        let watched = Rc::new(Watched::new(0));
        let seen = Rc::new(Cell::new(0));
        let (inner, heard) = (watched.clone(), seen.clone());
        watched.watch(move |_| {
            heard.set(*inner.get());
            inner.watch(|_| {});
        });

        watched.replace(3);

        assert_eq!(seen.get(), 3);
    }

    #[test]
    fn a_snapshot_taken_earlier_keeps_its_value() {
        let watched = Watched::new(vec![1]);
        let earlier = watched.get();

        watched.replace(vec![1, 2]);

        assert_eq!((*earlier).clone(), vec![1]);
        assert_eq!(watched.with(Vec::len), 2);
    }
}
