//! Completions held behind asynchronous requests, and the engine's depth
//! and counts with them.

use super::*;

#[test]
fn a_held_completion_does_not_wait_behind_younger_asynchronous_ones() {
    let rig = Rig::new(30_000, 1_500, 30_000, 0);
    let mut caller = rig.adaptive(8);
    caller.run(2_000);
    caller.drain();
    let queue_read = |caller: &mut Caller, tag| {
        let buf = caller.buffers.pop().unwrap();
        let read = Request::read(caller.handle, 0, buf, tag);
        assert!(matches!(caller.engine.queue(read), QueueOutcome::Queued));
        caller.engine.commit().unwrap();
    };
    // Two reads out (this class goes asynchronously), then an fsync (a class
    // of its own, inline, so held), then two more reads.
    queue_read(&mut caller, 1);
    queue_read(&mut caller, 2);
    let sync = Request::sync(caller.handle, false, 3);
    assert!(matches!(caller.engine.queue(sync), QueueOutcome::Queued));
    caller.engine.commit().unwrap();
    queue_read(&mut caller, 4);
    queue_read(&mut caller, 5);
    // Every read is done by now.
    advance(&rig.clock, 1_000_000);
    // Reaped one at a time, as fio reaps: oldest first, the held fsync
    // between the reads queued before it and those queued after it (it
    // used to come last, after every asynchronous completion).
    let mut order = Vec::new();
    for _ in 0..5 {
        let mut done = Vec::new();
        assert_eq!(caller.engine.reap(1, 1, &mut done).unwrap(), 1);
        order.push(done[0].user_data);
        if let Some(buf) = done.pop().map(|c| c.buf) {
            caller.buffers.push(buf);
        }
    }
    assert_eq!(order, [1, 2, 3, 4, 5]);
}

#[test]
fn held_counts_the_completions_a_reap_hands_over_at_once() {
    let rig = Rig::new(30_000, 1_500, 30_000, 0);
    let mut caller = rig.adaptive(8);
    caller.run(2_000);
    caller.drain();
    // Two reads out (this class goes asynchronously), then two fsyncs (a
    // class of its own, inline, so held).
    for tag in [1, 2] {
        let buf = caller.buffers.pop().unwrap();
        let read = Request::read(caller.handle, 0, buf, tag);
        assert!(matches!(caller.engine.queue(read), QueueOutcome::Queued));
    }
    caller.engine.commit().unwrap();
    for tag in [3, 4] {
        let sync = Request::sync(caller.handle, false, tag);
        assert!(matches!(caller.engine.queue(sync), QueueOutcome::Queued));
    }
    caller.engine.commit().unwrap();
    assert_eq!(
        caller.engine.held(),
        0,
        "held behind the reads queued before them"
    );
    advance(&rig.clock, 1_000_000);
    let mut done = Vec::new();
    assert_eq!(caller.engine.reap(1, 1, &mut done).unwrap(), 1);
    assert_eq!(done[0].user_data, 1);
    assert_eq!(caller.engine.held(), 0, "one older read is still out");
    done.clear();
    assert_eq!(caller.engine.reap(1, 1, &mut done).unwrap(), 1);
    assert_eq!(done[0].user_data, 2);
    assert_eq!(caller.engine.held(), 2, "both fsyncs may come out now");
    done.clear();
    assert_eq!(caller.engine.reap(0, 2, &mut done).unwrap(), 2);
    let tags: Vec<u64> = done.iter().map(|c| c.user_data).collect();
    assert_eq!(tags, [3, 4]);
    assert_eq!((caller.engine.held(), caller.engine.in_flight()), (0, 0));
}

#[test]
fn inline_completions_wait_for_the_reap_while_asynchronous_ones_are_out() {
    let rig = Rig::new(30_000, 1_500, 30_000, 0);
    let mut caller = rig.adaptive(4);
    caller.run(2_000);
    caller.drain();
    // Fill the queue with reads, which this class sends asynchronously.
    while caller.outstanding < 3 {
        let buf = caller.buffers.pop().unwrap();
        let read = Request::read(caller.handle, 0, buf, 7);
        assert!(matches!(caller.engine.queue(read), QueueOutcome::Queued));
        caller.outstanding += 1;
    }
    caller.engine.commit().unwrap();
    let before = caller.paths();
    // An fsync is a class of its own, which starts inline.
    let sync = Request::sync(caller.handle, false, 99);
    assert!(
        matches!(caller.engine.queue(sync), QueueOutcome::Queued),
        "an inline fsync is held while reads are out"
    );
    assert_eq!(caller.paths().inline, before.inline + 1);
    assert_eq!(caller.engine.in_flight(), 4);
    assert_eq!(
        caller.engine.commit().unwrap(),
        1,
        "the held completion counts as handed over"
    );
    let mut done = Vec::new();
    assert_eq!(caller.engine.reap(3, 3, &mut done).unwrap(), 3);
    let tags: Vec<u64> = done.iter().map(|c| c.user_data).collect();
    assert_eq!(tags, [7, 7, 7], "the asynchronous ones, older, come first");
    assert!(
        done.iter()
            .all(|c| c.file == caller.handle && c.result == 4096)
    );
    assert_eq!(caller.engine.in_flight(), 1);
    // Nothing asynchronous is left, but a completion is held: the next
    // inline one is held behind it (not `Busy`: the engine is not full).
    assert!(
        matches!(
            caller
                .engine
                .queue(Request::sync(caller.handle, false, 100)),
            QueueOutcome::Queued
        ),
        "an inline completion waits behind a held one"
    );
    assert_eq!(caller.engine.in_flight(), 2);
    assert_eq!(caller.engine.commit().unwrap(), 1);
    done.clear();
    assert_eq!(caller.engine.reap(1, 4, &mut done).unwrap(), 2);
    let answers: Vec<(u64, i64)> = done.iter().map(|c| (c.user_data, c.result)).collect();
    assert_eq!(
        answers,
        [(99, 0), (100, 0)],
        "in the order they were queued"
    );
    assert_eq!(caller.engine.in_flight(), 0);
    assert!(
        matches!(
            caller.engine.queue(Request::sync(caller.handle, false, 101)),
            QueueOutcome::Completed(c) if c.user_data == 101
        ),
        "nothing out: inline completes at once"
    );
}

#[test]
fn held_completions_make_the_engine_busy_only_at_its_depth() {
    let rig = Rig::new(30_000, 1_500, 30_000, 0);
    let mut caller = rig.adaptive(4);
    caller.run(2_000);
    caller.drain();
    let buf = caller.buffers.pop().unwrap();
    let read = Request::read(caller.handle, 0, buf, 7);
    assert!(matches!(caller.engine.queue(read), QueueOutcome::Queued));
    caller.engine.commit().unwrap();
    // Inline fsyncs are held behind the asynchronous read, then behind each other.
    for tag in 0..3 {
        assert!(matches!(
            caller
                .engine
                .queue(Request::sync(caller.handle, false, 90 + tag)),
            QueueOutcome::Queued
        ));
    }
    let mut done = Vec::new();
    assert_eq!(caller.engine.reap(1, 1, &mut done).unwrap(), 1);
    assert_eq!(done[0].user_data, 7, "the oldest first");
    assert_eq!(caller.engine.in_flight(), 3);
    assert!(matches!(
        caller.engine.queue(Request::sync(caller.handle, false, 93)),
        QueueOutcome::Queued
    ));
    assert_eq!(caller.engine.in_flight(), 4);
    let QueueOutcome::Busy(_) = caller.engine.queue(Request::sync(caller.handle, false, 94)) else {
        panic!("four held completions fill a depth of 4")
    };
    done.clear();
    assert_eq!(caller.engine.reap(1, 8, &mut done).unwrap(), 4);
    let tags: Vec<u64> = done.iter().map(|c| c.user_data).collect();
    assert_eq!(tags, [90, 91, 92, 93]);
}

#[test]
fn every_request_is_counted_on_one_path() {
    let rig = Rig::new(30_000, 1_500, 30_000, 0);
    let mut caller = rig.adaptive(4);
    caller.run(3_000);
    let paths = caller.paths();
    // The caller leaves at most its depth outstanding.
    let queued = paths.inline + paths.asynchronous;
    assert!((3_000..=3_004).contains(&queued), "{paths:?}");
    assert!(paths.explored >= 16 && paths.explored < 3_000, "{paths:?}");
    assert!(paths.switches >= 1, "{paths:?}");
}

#[test]
fn busy_at_depth_and_files_held_while_requests_are_out() {
    let rig = Rig::new(30_000, 1_500, 30_000, 0);
    let mut caller = rig.adaptive(4);
    caller.run(2_000);
    caller.drain();
    for tag in 0..4 {
        let buf = caller.buffers.pop().unwrap();
        let read = Request::read(caller.handle, 0, buf, tag);
        assert!(matches!(caller.engine.queue(read), QueueOutcome::Queued));
        assert_eq!(caller.engine.in_flight(), tag as usize + 1);
    }
    let extra = back_buffer(&mut caller);
    let QueueOutcome::Busy(back) =
        caller
            .engine
            .queue(Request::read(caller.handle, 8192, extra, 99))
    else {
        panic!("not busy at depth 4")
    };
    assert_eq!(
        (back.user_data, back.offset, back.file),
        (99, 8192, caller.handle)
    );
    match caller.engine.remove_file(caller.handle) {
        Err(Error::FileBusy {
            handle,
            in_flight: 4,
        }) => assert_eq!(handle, caller.handle.0),
        other => panic!("expected FileBusy, got {other:?}"),
    }
}
