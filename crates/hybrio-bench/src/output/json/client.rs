//! fio's client mode, which `hybrio --mpi` writes with each rank as a
//! client: no `jobs` but `client_stats`, and every server's `global
//! options` and `disk_util` marked with its `hostname` and `port`.

use super::job::{disk_object, job_object, options};
use super::printer::{Json, Obj};
use crate::output::report::{ClientReport, JobReport, RunReport, summary_of_group};
use crate::stats::GroupSummary;

/// `global options`, `client_stats` and `disk_util` as fio's client.c
/// writes them: all three whatever they hold, as fio makes them before the
/// servers report.
pub(super) fn add_clients(root: &mut Obj, report: &RunReport, plus: bool) {
    root.push("global options", global_options(report));
    root.push("client_stats", Json::Arr(client_stats(report, plus)));
    let disks = report
        .clients
        .iter()
        .flat_map(|client| {
            client.disk_util.iter().map(|d| {
                let mut o = disk_object(d);
                add_client_info(&mut o, client);
                Json::Obj(o)
            })
        })
        .collect();
    root.push("disk_util", Json::Arr(disks));
}

/// fio's `json_object_add_client_info()`.
fn add_client_info(o: &mut Obj, client: &ClientReport) {
    o.str("hostname", &client.hostname);
    o.uint("port", u64::from(client.port));
}

/// With one server, one object. With several, fio 3.39 and later write an
/// array: each server that has global options gets an object of them,
/// headed by its `hostname` and `port` (every rank runs the same job file,
/// so each rank's are the run's). fio 3.33 wrote one object for all.
fn global_options(report: &RunReport) -> Json {
    let globals = || options(&report.global_options, report.fio_compat).unwrap_or_default();
    if report.clients.len() <= 1 || !report.fio_compat.global_options_per_server() {
        return Json::Obj(globals());
    }
    if report.global_options.is_empty() {
        return Json::Arr(Vec::new());
    }
    let per_server = report
        .clients
        .iter()
        .map(|client| {
            let mut o = Obj::default();
            add_client_info(&mut o, client);
            o.0.extend(globals().0);
            Json::Obj(o)
        })
        .collect();
    Json::Arr(per_server)
}

/// Every client's jobs, each with its `hostname` and `port`, then the jobs
/// of all clients merged, named `All clients`. Their percentiles are those
/// of the pooled histograms, as fio 3.39 and later compute them (fio 3.33
/// wrote none there).
fn client_stats(report: &RunReport, plus: bool) -> Vec<Json> {
    let mut out = Vec::new();
    for client in &report.clients {
        for job in &client.jobs {
            // Its share of its own group, as each fio server reports it.
            let group = summary_of_group(&client.jobs, job.groupid);
            let mut o = client_job(job, Some(&group), plus, report);
            add_client_info(&mut o, client);
            out.push(Json::Obj(o));
        }
    }
    let host = report.clients.first().map_or("", |c| c.hostname.as_str());
    for job in &report.jobs {
        let mut merged = job.clone();
        merged.desc.name = "All clients".into();
        let mut o = client_job(&merged, report.group(job.groupid), plus, report);
        o.str("hostname", host);
        o.uint("port", 0);
        out.push(Json::Obj(o));
    }
    out
}

/// A job's entry as a fio client writes it. A fio client reckons no ETA of
/// its servers' jobs (get_jobs_eta() is the jobs' process's), so its entries
/// have neither `eta` nor `elapsed`.
fn client_job(job: &JobReport, rs: Option<&GroupSummary>, plus: bool, report: &RunReport) -> Obj {
    let mut o = job_object(job, rs, plus, report.fio_compat);
    o.0.retain(|(key, _)| key != "eta" && key != "elapsed");
    o
}
