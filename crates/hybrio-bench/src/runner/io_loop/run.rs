//! The loop itself, fio's `do_io`: the workload's passes, then what verify
//! reads back; each request offered to the engine, committed and reaped.

use std::time::Duration;

use hybrio::engine::QueueOutcome;
use hybrio::request::{Op, Request};

use super::course::RampBySize;
use super::replaying::Replayed;
use super::state::IoLoop;
use super::{buffers, min_rate, verify};
use crate::offsets::Direction;
use crate::runner::errno::{EIO, error_errno};

/// Engine errors without a completion between them after which draining
/// gives up on what is left.
const MAX_ERRORS_WITHOUT_PROGRESS: u32 = 100;

/// How long a network job that did all its I/O waits for what is still out.
const LAST_REPLIES: Duration = Duration::from_secs(5);

/// What a job whose saved verify state is missing fails with.
const ENOENT: i32 = 2;

impl IoLoop<'_> {
    pub(in crate::runner) fn run(&mut self) {
        self.run_phases();
        if let Some(state) = &mut self.verify
            && let Some(first) = state.finish_async()
            && !self.job.options.errors.tolerates_bad_blocks()
        {
            self.fail(verify::EILSEQ, first);
        }
    }

    /// The workload, then what verify reads back.
    fn run_phases(&mut self) {
        if let Some(message) = self.verify.as_mut().and_then(|v| v.offload_error.take()) {
            self.fail(EIO, message);
            return;
        }
        let pristine = self
            .verify
            .as_ref()
            .is_some_and(|v| v.replay)
            .then(|| self.job.plan.clone());
        if let Some(state) = &mut self.verify
            && self.job.options.verify.state_load
            && let Err(message) = state.load()
        {
            self.fail(ENOENT, message);
            return;
        }
        let verify_only = self.job.options.verify.only && self.job.options.rw.writes();
        if self.verify.is_some() && verify_only {
            let blocks = self.planned_writes(true);
            self.read_back(blocks);
            return;
        }
        self.run_workload();
        // How far the writes got, saved before the read-back: whatever
        // happens to it, a later verify_only run knows.
        self.save_verify_state();
        let Some(state) = &mut self.verify else {
            return;
        };
        let blocks = match pristine {
            // experimental_verify: the writes again, from the plan as it
            // was when they started.
            Some(plan) => {
                self.job.plan = plan;
                self.planned_writes(false)
            }
            None => state.take_read_back(),
        };
        if blocks.is_empty() || self.failure.is_some() || self.stopping() {
            return;
        }
        self.read_back(blocks);
    }

    /// Whether the job is to stop now: Ctrl-C, or another job ended it
    /// (`exitall`).
    #[inline]
    pub(super) fn stopping(&self) -> bool {
        hybrio::interrupt::requested()
            || self
                .job
                .stop
                .as_ref()
                .is_some_and(crate::runner::stop::JobStop::requested)
    }

    /// The job's I/O is over: ends the jobs `exitall` (or a failure with
    /// `exitall_on_error`) says to, now rather than once the job's teardown
    /// is done: meanwhile a job held to its flow share by this one's would
    /// run alone, free of it (a flake hunt's run saw 1:5 where 8:1 was due).
    /// Whoever ends the job says so again then, with what failed since.
    pub(in crate::runner) fn end_others(&self) {
        if let Some(stop) = &self.job.stop {
            let options = &self.job.options;
            stop.job_ended(
                self.failure.is_some(),
                options.exitall_on_error,
                options.exit_what,
            );
        }
    }

    /// Saves the verify state now (a failure to is the job's).
    fn save_verify_state(&mut self) {
        let now = self.clock.now();
        if let Some(state) = &mut self.verify
            && let Err(error) = state.save(now)
        {
            let errno = match &error {
                crate::verify::StateError::Io { source, .. } => {
                    source.raw_os_error().unwrap_or(EIO)
                }
                crate::verify::StateError::Bad { .. } => EIO,
            };
            self.fail(errno, error.to_string());
        }
    }

    fn run_workload(&mut self) {
        let options = self.job.options.clone();
        let mut min_rate = min_rate::MinRate::new(&options);
        let nanos = |d: Duration| u64::try_from(d.as_nanos()).unwrap_or(u64::MAX);
        let ramp_end = (!options.ramp_time.is_zero()).then(|| nanos(options.ramp_time));
        // ramp_size: the job's runtime starts once the ramp is over.
        let mut deadline = options
            .runtime
            .filter(|_| options.ramp_size.is_none())
            .map(|r| nanos(options.ramp_time).saturating_add(nanos(r)));
        let mut ramp_by_size = options.ramp_size.map(RampBySize::new);
        let mut ramping = ramp_end.is_some() || ramp_by_size.is_some();
        self.log_from = match ramp_by_size {
            Some(_) => u64::MAX,
            None => ramp_end.unwrap_or(0),
        };
        // Counted from the job's own I/O start, ramp time included: the point
        // is when the cache state changes, not what the statistics record.
        let mut drop_cache_at = options.drop_cache_after.map(nanos);
        let batch_submit = options.batch_submit() as usize;
        let complete_min = options.iodepth_batch_complete_min as usize;
        let complete_max = options.batch_complete_max() as usize;
        let depth_low = options.depth_low() as usize;
        let depth = options.iodepth as usize;
        let sync_every = if options.fsync > 0 {
            options.fsync
        } else {
            options.fdatasync
        };
        let data_only = options.fsync == 0;
        let limit_by_size = !options.time_based;

        loop {
            let ramp_over = match &mut ramp_by_size {
                Some(ramp) => {
                    let group = self.job.ramp_group.as_ref();
                    let over = group.is_some() && self.progress.ramp_over()
                        || ramp.over(self.now, || {
                            let others = group.map_or(0, |g| g.others_bytes(self.progress));
                            crate::stats::DataDir::ALL
                                .iter()
                                .map(|&dir| self.stats.dir(dir).io_bytes())
                                .sum::<u64>()
                                + others
                        });
                    if over && let Some(group) = group {
                        group.end_ramp();
                    }
                    over
                }
                None => ramp_end.is_some_and(|end| self.now >= end),
            };
            if ramping && ramp_over {
                ramping = false;
                self.log_from = self.log_from.min(self.now);
                self.stats.reset(self.now);
                self.measured_from = self.now;
                if let Some(min_rate) = &mut min_rate {
                    min_rate.restart(self.now);
                }
                self.lost_before = self
                    .job
                    .session
                    .as_ref()
                    .map_or(0, crate::net::Session::datagrams_lost);
                if let Some(pacing) = &mut self.pacing {
                    pacing.restart(self.now);
                }
                deadline = options.runtime.map(|r| self.now.saturating_add(nanos(r)));
            }
            let out_of_time = deadline.is_some_and(|d| self.now >= d);
            if self.now >= self.next_steady_sample {
                self.sample_steady_state();
            }
            if self.latency_target.is_some() {
                self.check_latency_target();
            }
            // A trimwrite's trimmed block is written before the job ends.
            let block_pending = self.job.plan.write_after_trim_pending();
            // As both fios, the ramp's bytes count in a size-limited job's
            // size, and a job whose size runs out during the ramp ends then,
            // its statistics those of the ramp.
            let out_of_work = (limit_by_size
                && self.issued_bytes >= self.job.total_bytes
                && self.refused.is_none()
                && !block_pending)
                || options.number_ios.is_some_and(|n| self.ios_issued >= n)
                || self.plan_ended
                || (self.refused.is_none()
                    && self
                        .job
                        .replay
                        .as_ref()
                        .is_some_and(crate::iolog::Cursor::done));
            let peer_done = self
                .job
                .session
                .as_ref()
                .is_some_and(crate::net::Session::peer_done);
            let steady = self.steady.as_ref().is_some_and(|s| s.attained);
            if self.failure.is_some()
                || out_of_time
                || out_of_work
                || peer_done
                || steady
                || self.device_full
                || self.latency_done
                || self.stopping()
            {
                if let Some((slot, request)) = self.refused.take() {
                    // A trim's or a sync's slot kept its buffer.
                    if request.op.moves_data() {
                        self.slots[slot].buf = Some(request.buf);
                    }
                    self.free.push(slot);
                }
                break;
            }
            if drop_cache_at.is_some_and(|at| self.now >= at) {
                drop_cache_at = None;
                self.drop_cache_mid_run();
            }
            if self.now >= self.next_publish {
                self.publish(deadline);
                if let Some(missed) = min_rate
                    .as_mut()
                    .and_then(|m| m.check(self.now, &self.stats))
                {
                    self.fail(EIO, missed);
                }
                if self.verify.as_ref().is_some_and(|v| v.save_due(self.now)) {
                    self.save_verify_state();
                }
            }
            if self.refused.is_none() && self.pass_issued >= self.job.pass_bytes && !block_pending {
                self.start_new_pass();
            }
            if self.refused.is_none()
                && self
                    .job
                    .flow
                    .as_ref()
                    .is_some_and(crate::runner::flow::JobFlow::ahead)
            {
                // Ahead of its flow share: as fio, what is in flight
                // completes and the job waits flow_sleep (or just yields).
                if options.flow_sleep.is_zero() {
                    std::thread::yield_now();
                } else {
                    self.drain();
                    std::thread::sleep(options.flow_sleep);
                }
                self.now = self.clock.now();
                continue;
            }
            if self.refused.is_none()
                && let Some(blocks) = self
                    .verify
                    .as_mut()
                    .and_then(verify::VerifyState::backlog_due)
            {
                self.drain();
                self.read_back(blocks);
                continue;
            }
            if let Some((slot, request)) = self.refused.take() {
                self.offer(slot, request, batch_submit, complete_min, complete_max);
                continue;
            }
            if !self.to_close.is_empty() {
                // openfiles: a file done for the pass closes once what is
                // in flight, its last I/O among it, has completed.
                self.drain();
                if let Err(error) = self.close_files() {
                    self.fail(error_errno(&error), error.to_string());
                    continue;
                }
            }
            let in_flight = depth - self.free.len();
            if self
                .latency_target
                .as_ref()
                .is_some_and(|t| in_flight >= t.depth && in_flight > 0)
            {
                // latency_target: no deeper than the depth it tries now.
                self.commit();
                self.reap(1, complete_max);
                continue;
            }
            let Some(slot) = self.free.pop() else {
                self.commit();
                // Full: drain to iodepth_low, waiting for at least one completion each time.
                loop {
                    let in_flight = depth - self.free.len();
                    self.reap(complete_min.max(1).min(in_flight), complete_max);
                    if depth - self.free.len() <= depth_low || self.failure.is_some() {
                        break;
                    }
                }
                continue;
            };
            let mut request = if self.job.replay.is_some() {
                match self.next_replayed(deadline) {
                    Replayed::Io(io) => self.request_for(slot, &io),
                    Replayed::Sync(file, data_only) => {
                        self.slots[slot].extent = None;
                        if self.job.iolog.is_some() {
                            self.log_sync(self.job.files[file].0, data_only);
                        }
                        Request::sync(self.job.files[file].0, data_only, slot as u64)
                    }
                    Replayed::Nothing => {
                        self.free.push(slot);
                        continue;
                    }
                }
            } else if sync_every > 0 && self.writes_since_sync >= sync_every {
                self.slots[slot].extent = None;
                self.writes_since_sync = 0;
                if self.job.iolog.is_some() {
                    self.log_sync(self.last_written, data_only);
                }
                Request::sync(self.last_written, data_only, slot as u64)
            } else {
                let mut direction = self.job.plan.next_direction();
                if let Some(pacing) = &self.pacing {
                    let mixes = self.job.plan.mixes_directions();
                    let (chosen, due) = pacing.pick(direction, self.now, mixes);
                    if due > self.now {
                        // Everything in flight completes first, the slot included.
                        self.free.push(slot);
                        self.wait_until(due, deadline);
                        continue;
                    }
                    direction = chosen;
                }
                self.enter_zone();
                let mut io = self.job.plan.next_io_in(direction);
                if self.job.plan.past_end() && options.loops == 1 {
                    // As fio: no I/O past the region's end; the pass ends
                    // (the job, unless it is time based).
                    self.free.push(slot);
                    if options.time_based {
                        self.start_new_pass();
                    } else {
                        self.plan_ended = true;
                    }
                    continue;
                }
                // Files done with this I/O: their `close` is logged after it.
                let closing_from = self.to_close.len();
                if let Some((opened, closed)) = self.job.plan.take_file_changes() {
                    self.to_close.extend(closed);
                    if let Err(error) = self.open_files(&opened) {
                        self.free.push(slot);
                        self.fail(error_errno(&error), error.to_string());
                        continue;
                    }
                }
                if self.job.zones.is_some() {
                    io.offset += self.zone_base;
                    self.zone_bytes += io.len;
                }
                if options.serialize_overlap {
                    self.wait_out_overlaps(slot, (io.file, io.offset, io.len), complete_max);
                    if self.failure.is_some() {
                        self.free.push(slot);
                        continue;
                    }
                }
                // As fio: sizes that vary are drawn to fit the file (the
                // plan does), not what is left of the pass; with norandommap
                // the last I/O may take the pass past its size.
                if let Some(pacing) = &mut self.pacing {
                    pacing.book(io.direction, io.len);
                }
                let request = self.request_for(slot, &io);
                if self.job.iolog.is_some() {
                    let closing = self.to_close[closing_from..].to_vec();
                    self.log_closes(&closing);
                }
                request
            };
            if let Some(priorities) = &mut self.priorities
                && matches!(request.op, Op::Read | Op::Write)
            {
                let dir = usize::from(request.op == Op::Write);
                request.ioprio = priorities.choose(dir, request.len() as u64);
                self.slots[slot].ioprio = request.ioprio;
            }
            self.offer(slot, request, batch_submit, complete_min, complete_max);
            if options.thinkcycles > 0 {
                // fio's cycles_spin: a loop the compiler may not remove.
                for i in 0..options.thinkcycles {
                    std::hint::black_box(i);
                }
            }
            if !options.thinktime.is_zero() {
                self.think(&options, deadline);
            }
        }
        // A network job's requests still out complete on their own once its
        // peer is done too (its last replies, the end of its stream); a job
        // that failed or was interrupted ends them now, and one that did all
        // its I/O waits for them a few seconds at the most.
        if let Some(session) = &self.job.session {
            if self.failure.is_some() || self.stopping() {
                session.release();
            } else {
                session
                    .guard()
                    .set_deadline(Some(std::time::Instant::now() + LAST_REPLIES));
            }
        }
        self.drain();
    }

    /// The request of a planned (or replayed) I/O, its buffer made ready,
    /// counted as issued.
    #[inline(always)]
    fn request_for(&mut self, slot: usize, io: &crate::offsets::PlannedIo) -> Request {
        let mut buf = self.slots[slot]
            .buf
            .take()
            .expect("a free slot holds its buffer");
        if io.direction != Direction::Trim {
            buf.set_len(io.len as usize);
        }
        let handle = self.job.files[io.file].0;
        // Only serialize_overlap looks at a request's extent.
        if self.job.options.serialize_overlap {
            self.slots[slot].extent = Some((io.file, io.offset, io.len));
        }
        // As fio: a trimwrite's sizes count its trims; the write
        // after each comes with it.
        if !(io.direction == Direction::Write && self.job.options.rw.writes_after_trim()) {
            self.issued_bytes += io.len;
            self.pass_issued += io.len;
        }
        self.ios_issued += 1;
        if let Some(flow) = self.job.flow.as_mut() {
            flow.issued();
        }
        if self.job.iolog.is_some() {
            self.log_io(io.file, io.direction, io.offset, io.len);
        }
        match (io.direction, self.job.session.as_mut()) {
            // No data: the buffer stays with its slot.
            (Direction::Trim, _) => {
                self.slots[slot].buf = Some(buf);
                space_request(self.space, io.direction, handle, io, slot as u64)
            }
            (direction, _) if self.space.is_some() => {
                self.slots[slot].buf = Some(buf);
                space_request(self.space, direction, handle, io, slot as u64)
            }
            (Direction::Read, None) => {
                self.slots[slot].verify = self
                    .verify
                    .as_mut()
                    .filter(|v| v.checks_workload_reads())
                    .map(|v| v.regenerated(None));
                Request::read(handle, io.offset, buf, slot as u64)
            }
            (Direction::Write, None) => {
                if let Some(verify) = &mut self.verify {
                    self.slots[slot].verify = Some(verify.fill(buf.as_mut_slice(), io.offset));
                } else if self.write_data.refill {
                    self.write_data
                        .fill(buf.as_mut_slice(), self.min_write.max(1));
                } else if self.write_data.scramble {
                    let when = self.started + Duration::from_nanos(self.now);
                    buffers::WriteData::scramble(buf.as_mut_slice(), io.offset, when);
                }
                self.writes_since_sync += 1;
                self.last_written = handle;
                Request::write(handle, io.offset, buf, slot as u64)
            }
            (Direction::Read, Some(_)) => Request::recv(handle, buf, slot as u64),
            (Direction::Write, Some(session)) => {
                session.stamp(buf.as_mut_slice());
                Request::send(handle, buf, slot as u64)
            }
        }
    }

    /// Offers the ping-pong halves that completions asked for.
    fn offer_follow_ups(&mut self) {
        while let Some((slot, request)) = self.follow_ups.pop() {
            let max = self.slots.len();
            self.offer(slot, request, 1, 1, max);
        }
    }

    /// Offers one request to the engine and records what it did with it.
    #[inline(always)]
    pub(super) fn offer(
        &mut self,
        slot: usize,
        request: Request,
        batch_submit: usize,
        complete_min: usize,
        complete_max: usize,
    ) {
        // A ping-pong's second half is timed from its first.
        let start = if self.slots[slot].second_half {
            self.slots[slot].start
        } else {
            self.clock.now()
        };
        self.slots[slot].start = start;
        if !self.slots[slot].second_half {
            // Until a commit says when it went: a request completed in
            // `queue` (a ping-pong's first half, say) went at once.
            self.slots[slot].issue = start;
        }
        self.submitted += 1;
        // Matched in place: the completion is read where the engine wrote
        // it, not copied out first (a copy's read of what the engine has
        // just stored waits for the stores to land).
        let mut outcome = self.job.engine.queue(request);
        if let QueueOutcome::Completed(completion) = &mut outcome {
            let end = self.clock.now();
            self.now = end;
            self.stats.record_submit(1, 1);
            self.stats.record_complete(1);
            self.finish(completion, None, end.saturating_sub(start));
            self.stats.sample(end);
            if !self.follow_ups.is_empty() {
                self.offer_follow_ups();
            }
            return;
        }
        match outcome {
            QueueOutcome::Completed(_) => {}
            QueueOutcome::Queued => {
                self.slots[slot].start = start;
                self.now = start;
                self.pending.push(slot);
                if self.pending.len() >= batch_submit {
                    self.commit();
                }
                if complete_min == 0 {
                    self.reap(0, complete_max);
                } else if self.collect_held && self.pending.is_empty() {
                    // Requests the engine completed inline but holds behind
                    // asynchronous ones: finished, so taken now (reaping only
                    // when full kept a full queue of them, each waiting for
                    // `iodepth` others: 16 times a page-cache hit's latency).
                    let held = self.job.engine.held();
                    if held > 0 {
                        self.reap(0, held);
                    }
                }
            }
            QueueOutcome::Busy(request) => {
                // The engine holds completions it wants collected first (the
                // adaptive engine does, when it mixes paths): reap, then offer
                // the same request again.
                self.submitted -= 1;
                self.refused = Some((slot, request));
                self.commit();
                self.reap(1, complete_max);
            }
        }
    }

    /// A rate limit's pause: what is in flight completes first, as fio
    /// quiesces before it sleeps, so that no request's latency includes the
    /// pause; then the thread sleeps until `due` (or the deadline).
    #[cold]
    fn wait_until(&mut self, due: u64, deadline: Option<u64>) {
        self.drain();
        let until = deadline.map_or(due, |d| d.min(due));
        loop {
            let now = self.clock.now();
            self.now = now;
            if now >= until || self.stopping() {
                return;
            }
            // Sleeps of at most 100 ms keep Ctrl-C and status reports prompt.
            std::thread::sleep(Duration::from_nanos((until - now).min(100_000_000)));
            if self.now >= self.next_publish {
                self.publish(deadline);
            }
        }
    }

    /// fio's `thinktime`: after every `thinktime_blocks` I/Os (issued, or
    /// completed), what is in flight completes, then the job spins for
    /// `thinktime_spin` and sleeps the rest of `thinktime` (at most until
    /// its deadline).
    #[cold]
    fn think(&mut self, options: &crate::options::JobOptions, deadline: Option<u64>) {
        let done = if options.thinktime_count_issued {
            self.ios_issued
        } else {
            self.completed
        };
        if done < self.thought_at + options.thinktime_blocks {
            return;
        }
        self.thought_at = done;
        self.drain();
        let start = self.clock.now();
        let spin = u64::try_from(options.thinktime_spin.as_nanos()).unwrap_or(u64::MAX);
        let total = u64::try_from(options.thinktime.as_nanos()).unwrap_or(u64::MAX);
        while self.clock.now().saturating_sub(start) < spin.min(total) {
            std::hint::spin_loop();
        }
        self.wait_until(start.saturating_add(total), deadline);
    }

    /// Hands over what is queued and waits for everything in flight: no
    /// request is abandoned, unless the engine stopped making progress or
    /// keeps failing (then the job reports what it still holds).
    pub(super) fn drain(&mut self) {
        while self.free.len() < self.slots.len() {
            self.commit();
            if self.stalled || self.errors_since_progress >= MAX_ERRORS_WITHOUT_PROGRESS {
                let out = (self.slots.len() - self.free.len()) as u64;
                self.abandoned = out.min(self.job.engine.in_flight() as u64);
                return;
            }
            let before = self.completed + self.failed;
            self.reap(1, self.slots.len());
            if self.completed + self.failed == before
                && self.failure.is_some()
                && self.job.engine.in_flight() == 0
            {
                break;
            }
        }
    }

    pub(super) fn commit(&mut self) {
        if self.pending.is_empty() {
            return;
        }
        if let Err(error) = self.job.engine.commit() {
            // The requests stay queued in the engine: the next commit tries again.
            self.notice_progress(self.now);
            self.errors_since_progress += 1;
            self.fail(error_errno(&error), format!("commit: {error}"));
            return;
        }
        let issued = self.clock.now();
        self.now = issued;
        for &slot in &self.pending {
            let slot = &mut self.slots[slot];
            if !slot.second_half {
                slot.issue = issued;
            }
        }
        let in_flight = self.slots.len() - self.free.len();
        self.stats.record_submit(self.pending.len(), in_flight);
        self.pending.clear();
    }

    pub(super) fn reap(&mut self, min: usize, max: usize) {
        let mut done = std::mem::take(&mut self.done);
        let reaped = self.job.engine.reap(min, max, &mut done);
        let now = self.clock.now();
        self.now = now;
        // Completions appended before an error are the job's all the same.
        let count = done.len();
        if count > 0 {
            self.stats.record_complete(count);
        }
        // Each read where the engine put it, as in `offer`.
        for completion in done.iter_mut() {
            let slot = &self.slots[completion.user_data as usize];
            let slat = slot.issue.saturating_sub(slot.start);
            let clat = now.saturating_sub(slot.issue);
            self.finish(completion, Some(slat), clat);
        }
        done.clear();
        self.stats.sample(now);
        self.done = done;
        if !self.follow_ups.is_empty() {
            self.offer_follow_ups();
        }
        if let Err(error) = reaped {
            self.notice_progress(now);
            self.errors_since_progress += 1;
            self.fail(error_errno(&error), format!("reap: {error}"));
        }
        if count == 0 && min > 0 {
            self.fruitless_reap(min, now);
        }
    }
}

/// The request of a trim, or of an I/O of a space engine (fio's `falloc`,
/// `ftruncate`): no data moves; each covers the I/O's bytes.
fn space_request(
    engine: Option<crate::options::SpaceEngine>,
    direction: Direction,
    handle: hybrio::file::FileHandle,
    io: &crate::offsets::PlannedIo,
    tag: u64,
) -> Request {
    use crate::options::SpaceEngine;
    match (engine, direction) {
        (_, Direction::Trim) => Request::trim(handle, io.offset, io.len, tag),
        (Some(SpaceEngine::Ftruncate), _) => {
            let mut request = Request::truncate(handle, io.offset, tag);
            // The bytes it stands for, in the report, as fio counts them.
            request.span = io.len;
            request
        }
        (_, direction) => {
            Request::allocate(handle, io.offset, io.len, direction == Direction::Read, tag)
        }
    }
}
