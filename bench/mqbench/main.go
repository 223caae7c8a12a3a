// Command mqbench loads a PostgreSQL-backed queue, River or PgQ, with P producers and C
// consumers for a given time and prints what it measured as JSON (bench/mqbench/README.md).
//
// Lines on stdout, each one JSON object: {"event":"window_start"} when the measured window
// opens (after the warm-up), {"event":"window_end"} when it closes, then the result. The
// producers stop at the window's end; the consumers then drain the queue until every job
// inserted has been worked (or -drain-timeout passes).
package main

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"log/slog"
	"os"
	"sort"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/riverqueue/river"
	"github.com/riverqueue/river/riverdriver/riverpgxv5"
	"github.com/riverqueue/river/rivermigrate"
)

type options struct {
	system        string
	dsn           string
	producers     int
	consumers     int
	payload       int
	duration      time.Duration
	warmup        time.Duration
	drainTimeout  time.Duration
	fetchCooldown time.Duration
	fetchPoll     time.Duration
	pgqIdle       time.Duration
	pgqQueues     int
}

// Result is the last line the program prints.
type Result struct {
	System            string  `json:"system"`
	Producers         int     `json:"producers"`
	Consumers         int     `json:"consumers"`
	Payload           int     `json:"payload"`
	WindowS           float64 `json:"window_s"`
	ProducedInWindow  int64   `json:"produced_in_window"`
	DeliveredInWindow int64   `json:"delivered_in_window"`
	DeliveredPerS     float64 `json:"delivered_per_s"`
	LatencyP50Ms      float64 `json:"latency_p50_ms"`
	LatencyP99Ms      float64 `json:"latency_p99_ms"`
	LatencySamples    int     `json:"latency_samples"`
	Produced          int64   `json:"produced"`
	Delivered         int64   `json:"delivered"`
	Duplicates        int64   `json:"duplicates"`
	InsertErrors      int64   `json:"insert_errors"`
	Drained           bool    `json:"drained"`
	DrainS            float64 `json:"drain_s"`
	// River: jobs in state completed once the client stopped (-1: not read, PgQ).
	StoredCompleted int64             `json:"stored_completed"`
	Settings        map[string]string `json:"settings"`
}

// tracker counts deliveries by identity and keeps latencies of the window.
type tracker struct {
	mu         sync.Mutex
	seen       map[string]struct{}
	duplicates int64
	latencies  []int64 // µs, insert to start of work, in the window only
	inWindow   atomic.Bool
	inWinCount atomic.Int64
	delivered  atomic.Int64
}

func newTracker() *tracker { return &tracker{seen: make(map[string]struct{}, 1<<16)} }

func (t *tracker) started(latencyUs int64) {
	if t.inWindow.Load() {
		t.mu.Lock()
		t.latencies = append(t.latencies, latencyUs)
		t.mu.Unlock()
	}
}

func (t *tracker) done(keys ...string) {
	t.mu.Lock()
	fresh := int64(0)
	for _, k := range keys {
		if _, ok := t.seen[k]; ok {
			t.duplicates++
			continue
		}
		t.seen[k] = struct{}{}
		fresh++
	}
	t.mu.Unlock()
	t.delivered.Add(fresh)
	if t.inWindow.Load() {
		t.inWinCount.Add(fresh)
	}
}

func percentile(sorted []int64, p float64) float64 {
	if len(sorted) == 0 {
		return 0
	}
	i := int(p / 100 * float64(len(sorted)-1))
	return float64(sorted[i]) / 1000
}

func emit(v any) {
	b, err := json.Marshal(v)
	if err != nil {
		panic(err)
	}
	fmt.Fprintln(os.Stdout, string(b))
}

func nowUs() int64 { return time.Now().UnixMicro() }

// producerSet runs p goroutines calling insert until stop; counts successes.
type producerSet struct {
	stop     atomic.Bool
	produced atomic.Int64
	inWindow atomic.Int64
	errors   atomic.Int64
	wg       sync.WaitGroup
}

func (ps *producerSet) run(ctx context.Context, p int, t *tracker, insert func(ctx context.Context, i int) error) {
	for i := 0; i < p; i++ {
		ps.wg.Add(1)
		go func(i int) {
			defer ps.wg.Done()
			// Stopped by the flag, between inserts: an insert is never cancelled midway,
			// so each one counted is one committed, and each one committed is counted.
			for !ps.stop.Load() {
				if err := insert(ctx, i); err != nil {
					if !ps.stop.Load() {
						ps.errors.Add(1)
						fmt.Fprintf(os.Stderr, "mqbench: insert: %v\n", err)
						time.Sleep(10 * time.Millisecond)
					}
					continue
				}
				ps.produced.Add(1)
				if t.inWindow.Load() {
					ps.inWindow.Add(1)
				}
			}
		}(i)
	}
}

// measure opens and closes the window, stops the producers and waits for the drain.
func measure(o options, t *tracker, ps *producerSet) (Result, error) {
	time.Sleep(o.warmup)
	emit(map[string]string{"event": "window_start"})
	t.inWindow.Store(true)
	start := time.Now()
	time.Sleep(o.duration)
	t.inWindow.Store(false)
	window := time.Since(start)
	emit(map[string]string{"event": "window_end"})
	ps.stop.Store(true)
	ps.wg.Wait()
	drainStart := time.Now()
	produced := ps.produced.Load()
	drained := false
	for time.Since(drainStart) < o.drainTimeout {
		if t.delivered.Load() >= produced {
			drained = true
			break
		}
		time.Sleep(10 * time.Millisecond)
	}
	t.mu.Lock()
	lat := append([]int64(nil), t.latencies...)
	dups := t.duplicates
	t.mu.Unlock()
	sort.Slice(lat, func(i, j int) bool { return lat[i] < lat[j] })
	r := Result{
		System: o.system, Producers: o.producers, Consumers: o.consumers, Payload: o.payload,
		WindowS:           window.Seconds(),
		ProducedInWindow:  ps.inWindow.Load(),
		DeliveredInWindow: t.inWinCount.Load(),
		DeliveredPerS:     float64(t.inWinCount.Load()) / window.Seconds(),
		LatencyP50Ms:      percentile(lat, 50),
		LatencyP99Ms:      percentile(lat, 99),
		LatencySamples:    len(lat),
		Produced:          produced,
		Delivered:         t.delivered.Load(),
		Duplicates:        dups,
		InsertErrors:      ps.errors.Load(),
		Drained:           drained,
		DrainS:            time.Since(drainStart).Seconds(),
		StoredCompleted:   -1,
	}
	return r, nil
}

// ---- River ----

type benchArgs struct {
	InsertedAtUs int64  `json:"inserted_at_us"`
	Payload      string `json:"payload"`
}

func (benchArgs) Kind() string { return "mqbench" }

type benchWorker struct {
	river.WorkerDefaults[benchArgs]
	t *tracker
}

func (w *benchWorker) Work(_ context.Context, job *river.Job[benchArgs]) error {
	w.t.started(nowUs() - job.Args.InsertedAtUs)
	w.t.done(fmt.Sprint(job.ID))
	return nil
}

func runRiver(ctx context.Context, o options) (Result, error) {
	cfg, err := pgxpool.ParseConfig(o.dsn)
	if err != nil {
		return Result{}, err
	}
	cfg.MaxConns = int32(o.producers + 20)
	pool, err := pgxpool.NewWithConfig(ctx, cfg)
	if err != nil {
		return Result{}, err
	}
	defer pool.Close()
	migrator, err := rivermigrate.New(riverpgxv5.New(pool), nil)
	if err != nil {
		return Result{}, err
	}
	if _, err := migrator.Migrate(ctx, rivermigrate.DirectionUp, nil); err != nil {
		return Result{}, fmt.Errorf("rivermigrate: %w", err)
	}
	t := newTracker()
	workers := river.NewWorkers()
	river.AddWorker(workers, &benchWorker{t: t})
	client, err := river.NewClient(riverpgxv5.New(pool), &river.Config{
		Queues:            map[string]river.QueueConfig{river.QueueDefault: {MaxWorkers: o.consumers}},
		Workers:           workers,
		FetchCooldown:     o.fetchCooldown,
		FetchPollInterval: o.fetchPoll,
		Logger:            slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: slog.LevelWarn})),
	})
	if err != nil {
		return Result{}, err
	}
	if err := client.Start(ctx); err != nil {
		return Result{}, err
	}
	payload := strings.Repeat("x", o.payload)
	ps := &producerSet{}
	ps.run(ctx, o.producers, t, func(ctx context.Context, _ int) error {
		_, err := client.Insert(ctx, benchArgs{InsertedAtUs: nowUs(), Payload: payload}, nil)
		return err
	})
	r, err := measure(o, t, ps)
	if err != nil {
		return r, err
	}
	stopCtx, cancel := context.WithTimeout(ctx, 30*time.Second)
	defer cancel()
	if err := client.Stop(stopCtx); err != nil {
		return r, fmt.Errorf("river stop: %w", err)
	}
	if err := pool.QueryRow(ctx, "SELECT count(*) FROM river_job WHERE state = 'completed'").Scan(&r.StoredCompleted); err != nil {
		return r, err
	}
	r.Settings = map[string]string{
		"fetch_cooldown": o.fetchCooldown.String(), "fetch_poll_interval": o.fetchPoll.String(),
		"max_workers": fmt.Sprint(o.consumers), "pool_max_conns": fmt.Sprint(cfg.MaxConns),
	}
	return r, nil
}

// ---- PgQ ----

func runPgq(ctx context.Context, o options) (Result, error) {
	cfg, err := pgxpool.ParseConfig(o.dsn)
	if err != nil {
		return Result{}, err
	}
	cfg.MaxConns = int32(o.producers + o.consumers + 4)
	pool, err := pgxpool.NewWithConfig(ctx, cfg)
	if err != nil {
		return Result{}, err
	}
	defer pool.Close()
	var queues int
	if err := pool.QueryRow(ctx, "SELECT count(*) FROM pgq.queue WHERE queue_name LIKE 'bench\\_%'").Scan(&queues); err != nil {
		return Result{}, fmt.Errorf("pgq: %w (the harness creates the extension and queues)", err)
	}
	if queues != o.pgqQueues {
		return Result{}, fmt.Errorf("pgq: %d queues bench_*, want %d", queues, o.pgqQueues)
	}
	t := newTracker()
	payload := strings.Repeat("x", o.payload)
	ps := &producerSet{}
	ps.run(ctx, o.producers, t, func(ctx context.Context, i int) error {
		q := fmt.Sprintf("bench_%d", i%o.pgqQueues)
		_, err := pool.Exec(ctx, "SELECT pgq.insert_event($1, 'bench', $2, $3, NULL, NULL, NULL)",
			q, payload, fmt.Sprint(nowUs()))
		return err
	})
	cctx, stopConsumers := context.WithCancel(ctx)
	var cwg sync.WaitGroup
	var consumerErr atomic.Value
	for k := 0; k < o.consumers; k++ {
		cwg.Add(1)
		go func(k int) {
			defer cwg.Done()
			q := fmt.Sprintf("bench_%d", k%o.pgqQueues)
			for cctx.Err() == nil {
				n, err := pgqBatch(cctx, pool, q, t)
				if err != nil {
					if cctx.Err() == nil && !errors.Is(err, context.Canceled) {
						consumerErr.Store(err.Error())
						fmt.Fprintf(os.Stderr, "mqbench: consumer %s: %v\n", q, err)
						time.Sleep(50 * time.Millisecond)
					}
					continue
				}
				if n < 0 {
					select {
					case <-cctx.Done():
					case <-time.After(o.pgqIdle):
					}
				}
			}
		}(k)
	}
	r, err := measure(o, t, ps)
	stopConsumers()
	cwg.Wait()
	if err != nil {
		return r, err
	}
	if v := consumerErr.Load(); v != nil {
		fmt.Fprintf(os.Stderr, "mqbench: last consumer error: %v\n", v)
	}
	r.Settings = map[string]string{
		"queues": fmt.Sprint(o.pgqQueues), "consumer_idle_sleep": o.pgqIdle.String(),
		"batch": "next_batch, get_batch_events, finish_batch in one transaction",
	}
	return r, nil
}

// pgqBatch processes one batch of queue q in one transaction: -1 when no batch was ready.
func pgqBatch(ctx context.Context, pool *pgxpool.Pool, q string, t *tracker) (int, error) {
	tx, err := pool.Begin(ctx)
	if err != nil {
		return 0, err
	}
	defer tx.Rollback(context.Background()) //nolint:errcheck
	var batch *int64
	if err := tx.QueryRow(ctx, "SELECT pgq.next_batch($1, 'bench')", q).Scan(&batch); err != nil {
		return 0, err
	}
	if batch == nil {
		return -1, tx.Commit(ctx)
	}
	rows, err := tx.Query(ctx, "SELECT ev_id, ev_data, ev_extra1 FROM pgq.get_batch_events($1)", *batch)
	if err != nil {
		return 0, err
	}
	var keys []string
	for rows.Next() {
		var id int64
		var data, extra string
		if err := rows.Scan(&id, &data, &extra); err != nil {
			rows.Close()
			return 0, err
		}
		var inserted int64
		fmt.Sscan(extra, &inserted)
		t.started(nowUs() - inserted)
		keys = append(keys, q+":"+fmt.Sprint(id))
	}
	rows.Close()
	if err := rows.Err(); err != nil {
		return 0, err
	}
	if _, err := tx.Exec(ctx, "SELECT pgq.finish_batch($1)", *batch); err != nil {
		return 0, err
	}
	if err := tx.Commit(ctx); err != nil {
		return 0, err
	}
	// At-least-once: an event counts once its batch is finished and committed.
	t.done(keys...)
	return len(keys), nil
}

func main() {
	var o options
	flag.StringVar(&o.system, "system", "", "river or pgq")
	flag.StringVar(&o.dsn, "dsn", "", "postgres:// URL of the database")
	flag.IntVar(&o.producers, "producers", 1, "producer goroutines, each inserting in a closed loop")
	flag.IntVar(&o.consumers, "consumers", 1, "consumers (River: MaxWorkers; PgQ: consumer loops)")
	flag.IntVar(&o.payload, "payload", 200, "characters of payload per job")
	flag.DurationVar(&o.duration, "duration", 10*time.Second, "measured window")
	flag.DurationVar(&o.warmup, "warmup", 2*time.Second, "load before the window opens")
	flag.DurationVar(&o.drainTimeout, "drain-timeout", 60*time.Second, "longest drain after the window")
	flag.DurationVar(&o.fetchCooldown, "river-fetch-cooldown", river.FetchCooldownDefault, "River FetchCooldown")
	flag.DurationVar(&o.fetchPoll, "river-fetch-poll-interval", river.FetchPollIntervalDefault, "River FetchPollInterval")
	flag.DurationVar(&o.pgqIdle, "pgq-idle", 50*time.Millisecond, "PgQ consumer's sleep when no batch is ready")
	flag.IntVar(&o.pgqQueues, "pgq-queues", 0, "PgQ queues bench_0.. (default: -consumers); producer i inserts into i mod queues, consumer k reads k mod queues")
	flag.Parse()
	if o.pgqQueues == 0 {
		o.pgqQueues = o.consumers
	}
	if o.dsn == "" || o.producers < 1 || o.consumers < 1 {
		fmt.Fprintln(os.Stderr, "mqbench: -dsn, -producers >= 1 and -consumers >= 1 are required")
		os.Exit(2)
	}
	ctx := context.Background()
	var r Result
	var err error
	switch o.system {
	case "river":
		r, err = runRiver(ctx, o)
	case "pgq":
		r, err = runPgq(ctx, o)
	default:
		fmt.Fprintln(os.Stderr, "mqbench: -system river or pgq")
		os.Exit(2)
	}
	if err != nil {
		fmt.Fprintf(os.Stderr, "mqbench: %v\n", err)
		os.Exit(1)
	}
	emit(r)
}
