//! Calls that may wait on the device and have no request of an engine
//! (`open`: a path lookup may read directories and inodes from the disk),
//! run on a thread of their own so that no runtime worker waits for them.

use std::future::Future;
use std::pin::Pin;
use std::sync::{Arc, Mutex, PoisonError};
use std::task::{Context, Poll, Waker};

/// What the thread hands back, and who waits for it.
struct Handoff<T> {
    result: Option<std::thread::Result<T>>,
    waker: Option<Waker>,
}

/// Runs `call` on a new thread; ready when it returns. A panic in `call`
/// is resumed in the awaiting task, as if the call had run there. (One
/// thread a call: opens are rare beside reads and writes, and a thread
/// costs tens of microseconds here, as a `spawn_blocking` hop costs ten.)
pub(crate) async fn off_the_worker<T, F>(call: F) -> std::io::Result<T>
where
    T: Send + 'static,
    F: FnOnce() -> T + Send + 'static,
{
    let handoff = Arc::new(Mutex::new(Handoff {
        result: None,
        waker: None,
    }));
    let theirs = handoff.clone();
    std::thread::Builder::new()
        .name("hybrio-tokio-open".into())
        .spawn(move || {
            let result = std::panic::catch_unwind(std::panic::AssertUnwindSafe(call));
            let waker = {
                let mut handoff = theirs.lock().unwrap_or_else(PoisonError::into_inner);
                handoff.result = Some(result);
                handoff.waker.take()
            };
            if let Some(waker) = waker {
                waker.wake();
            }
        })?;
    let result = Wait(handoff).await;
    Ok(result.unwrap_or_else(|panic| std::panic::resume_unwind(panic)))
}

struct Wait<T>(Arc<Mutex<Handoff<T>>>);

impl<T> Future for Wait<T> {
    type Output = std::thread::Result<T>;

    fn poll(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Self::Output> {
        let mut handoff = self.0.lock().unwrap_or_else(PoisonError::into_inner);
        match handoff.result.take() {
            Some(result) => Poll::Ready(result),
            None => {
                handoff.waker = Some(cx.waker().clone());
                Poll::Pending
            }
        }
    }
}
