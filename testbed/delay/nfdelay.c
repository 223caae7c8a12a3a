/*
 * nfdelay: constant one-way delay for packets that nftables sends to NFQUEUE.
 *
 *   nfdelay [-r RTPRIO] [-m MAXLEN] NETNS:QUEUE:DELAY_NS ...
 *
 * For every argument it enters the network namespace NETNS (a name under /run/netns, or a
 * path), binds queue QUEUE there and goes back, so one process serves every namespace. Each
 * packet's verdict (accept) is held until arrival + DELAY_NS. The delay is constant per
 * queue, so release times are in arrival order: a FIFO per queue, released with one batch
 * verdict (every id up to the last due one). Packet payloads are never copied (META mode).
 *
 * Prints "ready" once every queue is bound. On SIGTERM or SIGINT it stops, unbinds (the
 * kernel drops what was still held) and prints one JSON line: packets per queue, how late
 * the releases were, and its own CPU time. Without a listener, queued packets are dropped
 * (no fail-open): if this process dies, the emulated links go dark instead of losing
 * their delay unnoticed.
 */
#define _GNU_SOURCE
#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <linux/netfilter.h>
#include <poll.h>
#include <sched.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include <libnetfilter_queue/libnetfilter_queue.h>

#define MAX_QUEUES 64
#define RECV_BUDGET 256 /* messages read per socket before releases are looked at again */

struct held {
	uint32_t id;
	uint64_t release_ns;
};

struct queue {
	char netns[256];
	uint16_t num;
	uint64_t delay_ns;
	struct nfq_handle *h;
	struct nfq_q_handle *qh;
	int fd;
	struct held *ring; /* capacity cap (a power of two), head..tail */
	uint32_t cap, head, tail;
	uint64_t packets, released, max_depth, recv_errors;
	uint64_t late_sum_ns, late_max_ns, overflow;
	uint64_t now_ns; /* receive time of the current batch, the fallback arrival time */
	uint64_t stamped;  /* packets whose arrival is the kernel's receive timestamp */
};

static struct queue queues[MAX_QUEUES];
static int nqueues;
static volatile sig_atomic_t stop_signal;
static int64_t real_minus_mono_ns; /* maps the kernel's (real-time) stamps to CLOCK_MONOTONIC */
static uint64_t early_ns;          /* wake this much before a release, then spin to it */

static uint64_t mono_ns(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

static void on_signal(int sig) { stop_signal = sig; }

static void die(const char *what, const char *detail)
{
	fprintf(stderr, "nfdelay: %s%s%s\n", what, detail ? ": " : "", detail ? detail : "");
	exit(1);
}

static int on_packet(struct nfq_q_handle *qh, struct nfgenmsg *msg, struct nfq_data *nfa,
		     void *data)
{
	(void)qh;
	(void)msg;
	struct queue *q = data;
	struct nfqnl_msg_packet_hdr *ph = nfq_get_msg_packet_hdr(nfa);
	if (ph == NULL)
		return 0;
	uint32_t depth = q->tail - q->head;
	if (depth == q->cap) {
		/* Cannot happen while the kernel's maxlen <= cap; counted, never held. */
		q->overflow++;
		return 0;
	}
	struct held *slot = &q->ring[q->tail & (q->cap - 1)];
	/* The arrival is when the packet reached the namespace (the kernel's stamp), so the
	 * time until this process reads it is part of the delay, not added to it. */
	uint64_t arrival = q->now_ns;
	struct timeval tv;
	if (nfq_get_timestamp(nfa, &tv) == 0 && tv.tv_sec > 0) {
		int64_t stamp = (int64_t)tv.tv_sec * 1000000000ll + (int64_t)tv.tv_usec * 1000ll -
				real_minus_mono_ns;
		/* A stamp from the future, or older than the batch by more than a second, is not
		 * trusted (clock step): the receive time stands. */
		if (stamp > 0 && (uint64_t)stamp <= q->now_ns &&
		    q->now_ns - (uint64_t)stamp < 1000000000ull) {
			arrival = (uint64_t)stamp;
			q->stamped++;
		}
	}
	slot->id = ntohl(ph->packet_id);
	slot->release_ns = arrival + q->delay_ns;
	q->tail++;
	q->packets++;
	if (depth + 1 > q->max_depth)
		q->max_depth = depth + 1;
	return 0;
}

static void enter_netns(const char *name)
{
	char path[300];
	if (strchr(name, '/'))
		snprintf(path, sizeof path, "%s", name);
	else
		snprintf(path, sizeof path, "/run/netns/%s", name);
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		die("cannot open network namespace", path);
	if (setns(fd, CLONE_NEWNET) != 0)
		die("cannot enter network namespace", path);
	close(fd);
}

static void bind_queue(struct queue *q, uint32_t maxlen, int home)
{
	enter_netns(q->netns);
	q->h = nfq_open();
	if (q->h == NULL)
		die("nfq_open failed in", q->netns);
	q->qh = nfq_create_queue(q->h, q->num, on_packet, q);
	if (q->qh == NULL) {
		char what[300];
		snprintf(what, sizeof what, "%s queue %u (already bound?)", q->netns, q->num);
		die("cannot bind", what);
	}
	if (nfq_set_mode(q->qh, NFQNL_COPY_META, 0) < 0)
		die("cannot set copy mode in", q->netns);
	if (nfq_set_queue_maxlen(q->qh, maxlen) < 0)
		die("cannot set queue length in", q->netns);
	/* GSO packets whole (no payload is looked at); fail-open off: no listener, no packet. */
	if (nfq_set_queue_flags(q->qh, NFQA_CFG_F_FAIL_OPEN | NFQA_CFG_F_GSO, NFQA_CFG_F_GSO) < 0)
		die("cannot set queue flags in", q->netns);
	nfnl_rcvbufsiz(nfq_nfnlh(q->h), 16 * 1024 * 1024);
	q->fd = nfq_fd(q->h);
	fcntl(q->fd, F_SETFL, fcntl(q->fd, F_GETFL) | O_NONBLOCK);
	q->cap = 1;
	while (q->cap < maxlen)
		q->cap <<= 1;
	q->ring = calloc(q->cap, sizeof *q->ring);
	if (q->ring == NULL)
		die("out of memory", NULL);
	if (setns(home, CLONE_NEWNET) != 0)
		die("cannot return to the original network namespace", NULL);
}

static void parse_queue(struct queue *q, const char *arg)
{
	char copy[512];
	snprintf(copy, sizeof copy, "%s", arg);
	char *delay = strrchr(copy, ':');
	if (delay == NULL)
		die("expected NETNS:QUEUE:DELAY_NS, got", arg);
	*delay++ = '\0';
	char *num = strrchr(copy, ':');
	if (num == NULL || copy[0] == '\0')
		die("expected NETNS:QUEUE:DELAY_NS, got", arg);
	*num++ = '\0';
	char *end;
	unsigned long n = strtoul(num, &end, 10);
	if (*num == '\0' || *end != '\0' || n > 65535)
		die("bad queue number in", arg);
	unsigned long long d = strtoull(delay, &end, 10);
	if (*delay == '\0' || *end != '\0' || d > 10ull * 1000000000ull)
		die("bad delay (integer ns, at most 10 s) in", arg);
	if (strlen(copy) >= sizeof q->netns)
		die("namespace name too long in", arg);
	memcpy(q->netns, copy, strlen(copy) + 1);
	q->num = (uint16_t)n;
	q->delay_ns = d;
}

/* Releases every due packet of q with one batch verdict; returns the next release time. */
static uint64_t release_due(struct queue *q, uint64_t now)
{
	uint32_t last = 0;
	int any = 0;
	while (q->head != q->tail) {
		struct held *p = &q->ring[q->head & (q->cap - 1)];
		if (p->release_ns > now)
			break;
		uint64_t late = now - p->release_ns;
		q->late_sum_ns += late;
		if (late > q->late_max_ns)
			q->late_max_ns = late;
		last = p->id;
		any = 1;
		q->head++;
		q->released++;
	}
	if (any && nfq_set_verdict_batch(q->qh, last, NF_ACCEPT) < 0)
		fprintf(stderr, "nfdelay: verdict on %s queue %u: %s\n", q->netns, q->num,
			strerror(errno));
	return q->head == q->tail ? UINT64_MAX : q->ring[q->head & (q->cap - 1)].release_ns;
}

static void sync_clocks(void)
{
	struct timespec r, m1, m2;
	clock_gettime(CLOCK_MONOTONIC, &m1);
	clock_gettime(CLOCK_REALTIME, &r);
	clock_gettime(CLOCK_MONOTONIC, &m2);
	int64_t mono = ((int64_t)m1.tv_sec + (int64_t)m2.tv_sec) * 500000000ll +
		       ((int64_t)m1.tv_nsec + (int64_t)m2.tv_nsec) / 2;
	real_minus_mono_ns = (int64_t)r.tv_sec * 1000000000ll + r.tv_nsec - mono;
}

static void receive(struct queue *q, char *buf, size_t len)
{
	sync_clocks();
	q->now_ns = mono_ns();
	for (int i = 0; i < RECV_BUDGET; i++) {
		ssize_t n = recv(q->fd, buf, len, MSG_DONTWAIT);
		if (n < 0) {
			if (errno == EAGAIN || errno == EWOULDBLOCK || errno == EINTR)
				return;
			/* ENOBUFS: the kernel could not hand a packet over, so it dropped it. */
			q->recv_errors++;
			continue;
		}
		nfq_handle_packet(q->h, buf, (int)n);
	}
}

static void report(uint64_t started)
{
	struct rusage ru;
	getrusage(RUSAGE_SELF, &ru);
	printf("{\"wall_s\": %.6f, \"cpu_user_s\": %.6f, \"cpu_sys_s\": %.6f, \"queues\": [",
	       (double)(mono_ns() - started) / 1e9,
	       ru.ru_utime.tv_sec + ru.ru_utime.tv_usec / 1e6,
	       ru.ru_stime.tv_sec + ru.ru_stime.tv_usec / 1e6);
	for (int i = 0; i < nqueues; i++) {
		struct queue *q = &queues[i];
		printf("%s{\"netns\": \"%s\", \"queue\": %u, \"delay_ns\": %llu, \"packets\": %llu,"
		       " \"released\": %llu, \"held_at_exit\": %u, \"max_depth\": %llu,"
		       " \"late_mean_ns\": %.1f, \"late_max_ns\": %llu, \"recv_errors\": %llu,"
		       " \"overflow\": %llu, \"stamped\": %llu}",
		       i ? ", " : "", q->netns, q->num, (unsigned long long)q->delay_ns,
		       (unsigned long long)q->packets, (unsigned long long)q->released,
		       q->tail - q->head, (unsigned long long)q->max_depth,
		       q->released ? (double)q->late_sum_ns / (double)q->released : 0.0,
		       (unsigned long long)q->late_max_ns, (unsigned long long)q->recv_errors,
		       (unsigned long long)q->overflow, (unsigned long long)q->stamped);
	}
	printf("]}\n");
	fflush(stdout);
}

int main(int argc, char **argv)
{
	int rtprio = 0;
	unsigned long maxlen = 65536;
	int opt;
	while ((opt = getopt(argc, argv, "r:m:e:")) != -1) {
		if (opt == 'r')
			rtprio = atoi(optarg);
		else if (opt == 'e')
			early_ns = strtoull(optarg, NULL, 10);
		else if (opt == 'm')
			maxlen = strtoul(optarg, NULL, 10);
		else
			die("usage: nfdelay [-r RTPRIO] [-m MAXLEN] [-e EARLY_NS] NETNS:QUEUE:DELAY_NS ...", NULL);
	}
	if (optind >= argc)
		die("usage: nfdelay [-r RTPRIO] [-m MAXLEN] [-e EARLY_NS] NETNS:QUEUE:DELAY_NS ...", NULL);
	if (argc - optind > MAX_QUEUES)
		die("too many queues", NULL);
	if (maxlen < 16 || maxlen > (1ul << 20))
		die("-m: queue length must be 16..1048576", NULL);

	/* Handlers set explicitly: SIGINT may be inherited as ignored. Blocked except in ppoll,
	 * so a signal cannot slip in between the check and the wait. */
	struct sigaction sa = {0};
	sa.sa_handler = on_signal;
	sigemptyset(&sa.sa_mask);
	sigaction(SIGTERM, &sa, NULL);
	sigaction(SIGINT, &sa, NULL);
	sigset_t block, waitmask;
	sigemptyset(&block);
	sigaddset(&block, SIGTERM);
	sigaddset(&block, SIGINT);
	sigprocmask(SIG_BLOCK, &block, &waitmask);
	sigdelset(&waitmask, SIGTERM);
	sigdelset(&waitmask, SIGINT);
	/* Gone with the testbed process that started it, even if that one is killed. */
	prctl(PR_SET_PDEATHSIG, SIGTERM);
	if (getppid() == 1)
		die("parent already gone", NULL);
	/* Timers wake at the release time, not up to 50 us later. */
	prctl(PR_SET_TIMERSLACK, 1ul);

	/* Any socket asking for receive timestamps makes the kernel stamp every packet on
	 * arrival; nfnetlink_queue hands the stamp over. Held open for the whole run. */
	int stamper = socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0);
	int one = 1;
	if (stamper < 0 || setsockopt(stamper, SOL_SOCKET, SO_TIMESTAMPNS, &one, sizeof one) != 0)
		fprintf(stderr, "nfdelay: no receive timestamps (%s); arrival = receive time\n",
			strerror(errno));
	sync_clocks();

	int home = open("/proc/self/ns/net", O_RDONLY | O_CLOEXEC);
	if (home < 0)
		die("cannot open /proc/self/ns/net", strerror(errno));
	for (int i = optind; i < argc; i++) {
		struct queue *q = &queues[nqueues++];
		parse_queue(q, argv[i]);
		bind_queue(q, (uint32_t)maxlen, home);
	}
	close(home);
	if (rtprio > 0) {
		struct sched_param sp = {.sched_priority = rtprio};
		if (sched_setscheduler(0, SCHED_FIFO, &sp) != 0)
			fprintf(stderr, "nfdelay: SCHED_FIFO %d unavailable (%s); normal priority\n",
				rtprio, strerror(errno));
	}

	size_t buflen = 65536;
	char *buf = malloc(buflen);
	struct pollfd *fds = calloc((size_t)nqueues, sizeof *fds);
	if (buf == NULL || fds == NULL)
		die("out of memory", NULL);
	for (int i = 0; i < nqueues; i++) {
		fds[i].fd = queues[i].fd;
		fds[i].events = POLLIN;
	}
	uint64_t started = mono_ns();
	printf("ready\n");
	fflush(stdout);

	while (!stop_signal) {
		uint64_t now = mono_ns();
		uint64_t next = UINT64_MAX;
		for (int i = 0; i < nqueues; i++) {
			uint64_t t = release_due(&queues[i], now);
			if (t < next)
				next = t;
		}
		struct timespec ts, *timeout = NULL;
		if (next != UINT64_MAX) {
			now = mono_ns();
			if (next > now && next - now <= early_ns) {
				/* Close enough: spin to the release rather than sleep past it. */
				int ready = poll(fds, (nfds_t)nqueues, 0);
				if (ready == 0) {
					while (mono_ns() < next)
						;
					continue;
				}
			}
			next = next > early_ns ? next - early_ns : 0;
			uint64_t wait = next > now ? next - now : 0;
			ts.tv_sec = (time_t)(wait / 1000000000ull);
			ts.tv_nsec = (long)(wait % 1000000000ull);
			timeout = &ts;
		}
		int n = ppoll(fds, (nfds_t)nqueues, timeout, &waitmask);
		if (n < 0) {
			if (errno == EINTR)
				continue;
			die("ppoll", strerror(errno));
		}
		for (int i = 0; n > 0 && i < nqueues; i++) {
			if (fds[i].revents & POLLIN)
				receive(&queues[i], buf, buflen);
			if (fds[i].revents & (POLLERR | POLLNVAL))
				receive(&queues[i], buf, buflen); /* picks up and counts the error */
		}
	}
	report(started);
	for (int i = 0; i < nqueues; i++) {
		nfq_destroy_queue(queues[i].qh);
		nfq_close(queues[i].h);
	}
	fprintf(stderr, "nfdelay: stopped by signal %d\n", (int)stop_signal);
	return 0;
}
