"""The watch as Prometheus metrics: a textfile for node_exporter's textfile collector and/or an
HTTP `/metrics` on 127.0.0.1, both from one registry (prometheus_client is imported here only).

Every metric carries the label `watch` (the watch's name), so several watches share a textfile
directory or a scrape config. Totals are counters restored from the watch's state on restart.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from prometheus_client import (
    CollectorRegistry,
    Counter,
    Gauge,
    start_http_server,
    write_to_textfile,
)

from evalrun.base.errors import ConfigError, UsageError
from evalrun.watching.state import TickPoint, WatchState

PREFIX = "evalrun_watch"


class WatchMetrics:
    """The watch's metrics; `publish` after every tick writes the textfile when one is asked."""

    def __init__(self, state: WatchState, *, textfile: Path | None = None) -> None:
        self.registry = CollectorRegistry()
        self._server: Any = None
        self._thread: Any = None
        self.textfile = textfile
        self.name = state.name
        r, label = self.registry, ["watch"]

        def gauge(name: str, doc: str) -> Any:
            return Gauge(f"{PREFIX}_{name}", doc, label, registry=r).labels(self.name)

        def counter(name: str, doc: str) -> Any:
            return Counter(f"{PREFIX}_{name}", doc, label, registry=r).labels(self.name)

        self.ticks = counter("ticks", "Ticks tried, down ones included.")
        self.alarms = counter("alarms", "Quality alarms raised.")
        self.down_ticks = counter("down_ticks", "Ticks the endpoint did not answer.")
        self.alarm = gauge("alarm", "1 while a quality alarm is raised and not recovered.")
        self.up = gauge("up", "1 when the last tick reached the endpoint, 0 when it was down.")
        self.statistic = gauge(
            "statistic", "The running test: the larger CUSUM's share of its threshold."
        )
        self.threshold = gauge("threshold", "The statistic at which the watch alarms (1).")
        self.drift_statistic = gauge("drift_statistic", "The drift CUSUM, in floor units.")
        self.drift_threshold = gauge("drift_threshold", "The drift CUSUM's alarm threshold.")
        self.hard_statistic = gauge("hard_statistic", "The hard-divergence CUSUM, in nats.")
        self.hard_threshold = gauge("hard_threshold", "The hard CUSUM's alarm threshold.")
        self.off = gauge("tick_off_items", "Probe items off the anchor in the last tick.")
        self.compared = gauge("tick_compared_items", "Probe items compared in the last tick.")
        self.drift = gauge("tick_drift", "Mean |delta logprob| against the anchor, last tick.")
        self.score = gauge("tick_score", "Share of probe items passed in the last tick.")
        self.garbled = gauge("tick_garbled_items", "Garbled answers in the last tick.")
        self.latency = gauge("tick_latency_seconds", "Mean answer latency in the last tick.")
        self.last = gauge("last_tick_timestamp_seconds", "When the last tick ended (unix time).")
        self.units = gauge("tick_floor_units", "The last tick's drift in noise-floor units.")
        self.floor_drift = gauge("floor_drift", "The noise floor's drift (mean |delta logprob|).")
        self.floor_hard = gauge("floor_hard_rate", "Share of the floor's items that diverged hard.")
        self.floor_diverged = gauge("floor_diverged_rate", "Share of the floor's items diverged.")
        self.floor_source = Gauge(
            f"{PREFIX}_floor",
            "1 for where the noise floor came from: source measured (by the watch) or --floor.",
            ["watch", "source"],
            registry=r,
        )
        self.set_floor(state)
        self.ticks.inc(state.tick)
        self.alarms.inc(state.alarms)
        self.down_ticks.inc(sum(p.status == "down" for p in state.points))
        self.threshold.set(1.0)
        self._set_statistics(state)
        self.alarm.set(1 if state.alarmed else 0)
        self.up.set(0 if state.down else 1)

    def _set_statistics(self, state: WatchState) -> None:
        self.statistic.set(state.statistic)
        self.drift_statistic.set(state.running.drift)
        self.drift_threshold.set(state.cusum.h_units)
        self.hard_statistic.set(state.running.hard)
        self.hard_threshold.set(state.cusum.h)

    def set_floor(self, state: WatchState) -> None:
        """The floor's figures (nothing until the watch has one)."""
        if state.floor is None:
            return
        f = state.floor.floor
        self.floor_drift.set(f.drift)
        self.floor_hard.set(f.hard / f.items if f.items else 0.0)
        self.floor_diverged.set(f.diverged / f.items if f.items else 0.0)
        for source in ("measured", "--floor"):
            self.floor_source.labels(self.name, source).set(
                1 if source == state.floor.source else 0
            )

    def serve(self, port: int) -> None:
        """Serve /metrics on 127.0.0.1:`port` from a daemon thread until `close`."""
        try:
            self._server, self._thread = start_http_server(
                port, addr="127.0.0.1", registry=self.registry
            )
        except OSError as exc:
            raise UsageError(
                f"--metrics-port {port}: cannot listen on 127.0.0.1:{port} ({exc.strerror}); "
                "pick a free port"
            ) from exc

    def close(self) -> None:
        """Stop serving /metrics (its port is free again)."""
        server = self._server
        if server is not None:
            server.shutdown()
            server.server_close()
            self._thread.join(timeout=5)
            self._server = None

    def tick(self, state: WatchState, point: TickPoint, at: float, *, alarm: bool) -> None:
        """Record one tick (and an alarm it raised), then publish."""
        self.ticks.inc()
        self.alarms.inc(1 if alarm else 0)
        self._set_statistics(state)
        self.alarm.set(1 if state.alarmed else 0)
        self.up.set(0 if point.status == "down" else 1)
        self.last.set(at)
        if point.status == "down":
            self.down_ticks.inc()
        else:
            self.off.set(point.off)
            self.compared.set(point.compared)
            self.drift.set(point.drift)
            self.score.set(point.passed / point.answered if point.answered else 0.0)
            self.garbled.set(point.garbled)
            if point.latency_s is not None:
                self.latency.set(point.latency_s)
            if point.units is not None:
                self.units.set(point.units)
        self.set_floor(state)
        self.publish()

    def publish(self) -> None:
        if self.textfile is not None:
            try:
                self.textfile.parent.mkdir(parents=True, exist_ok=True)
                write_to_textfile(str(self.textfile), self.registry)
            except OSError as exc:
                raise ConfigError(
                    f"--metrics-file {self.textfile}: cannot write it ({exc.strerror}); "
                    "pick a writable folder"
                ) from exc
