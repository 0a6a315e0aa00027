/* rttlab-host-loader: loads one of rttlab's BPF programs, attaches it, and writes every record
 * it logs to a file until it is told to stop.
 *
 *   rttlab-host-loader OBJECT TARGET OUT [NAME=VALUE...]
 *
 * OBJECT is a compiled bpf/NAME.bpf.c. TARGET is the struct_ops map to register (a congestion
 * controller: its `.name` is what setsockopt(TCP_CONGESTION) selects), `tc:IFNAME`, the egress
 * of the interface IFNAME in the caller's network namespace, where the object's program `mark`
 * is attached (clsact), or `trace`, every program attached where its section says (a
 * tracepoint). OUT is the file the ring buffer's records go
 * to (struct rttlab_event, appended as they come). Each NAME=VALUE sets one of the object's
 * read-only parameters (a `const volatile __u64` global) by its name in the object's BTF; an
 * unknown name is an error. Prints "ready" on stdout once attached; SIGINT or SIGTERM detach
 * it and exit 0 after the last records are written, printing each counter of the object (its
 * `__u64` globals in .bss) as "NAME VALUE" on stdout. */
#include <bpf/btf.h>
#include <bpf/libbpf.h>
#include <errno.h>
#include <net/if.h>
#include <signal.h>
#include <sys/prctl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static volatile sig_atomic_t stop;

static void on_signal(int sig)
{
	(void)sig;
	stop = 1;
}

static int write_record(void *ctx, void *data, size_t size)
{
	return fwrite(data, size, 1, ctx) == 1 ? 0 : -EIO;
}

/* The object's internal map for the data section SEC (".rodata", ".bss"). */
static struct bpf_map *section_map(struct bpf_object *obj, const char *sec)
{
	struct bpf_map *map;
	size_t k = strlen(sec);
	bpf_object__for_each_map(map, obj)
	{
		const char *name = bpf_map__name(map);
		size_t n = strlen(name);
		if (n >= k && strcmp(name + n - k, sec) == 0)
			return map;
	}
	return NULL;
}

/* Calls `fn` with the name and offset of every 64-bit variable of the data section SEC. */
static int for_each_u64(struct bpf_object *obj, const char *sec, int (*fn)(const char *name, size_t offset, void *ctx), void *ctx)
{
	struct btf *btf = bpf_object__btf(obj);
	int id = btf ? btf__find_by_name_kind(btf, sec, BTF_KIND_DATASEC) : -1;
	if (id < 0)
		return 0;
	const struct btf_type *t = btf__type_by_id(btf, id);
	const struct btf_var_secinfo *v = btf_var_secinfos(t);
	for (int i = 0; i < btf_vlen(t); i++, v++) {
		const struct btf_type *var = btf__type_by_id(btf, v->type);
		if (v->size != 8)
			continue;
		int r = fn(btf__name_by_offset(btf, var->name_off), v->offset, ctx);
		if (r)
			return r;
	}
	return 0;
}

struct param {
	const char *name;
	unsigned long long value;
	char *data;
};

static int set_one(const char *name, size_t offset, void *ctx)
{
	struct param *p = ctx;
	if (strcmp(name, p->name) != 0)
		return 0;
	memcpy(p->data + offset, &p->value, 8);
	return 1;
}

/* Sets the u64 global NAME in the object's .rodata image to VALUE. */
static int set_param(struct bpf_object *obj, const char *name, unsigned long long value)
{
	struct bpf_map *map = section_map(obj, ".rodata");
	size_t size;
	char *data = map ? (char *)bpf_map__initial_value(map, &size) : NULL;
	struct param p = {name, value, data};
	if (!data || for_each_u64(obj, ".rodata", set_one, &p) != 1) {
		fprintf(stderr, "unknown parameter %s\n", name);
		return -1;
	}
	return 0;
}

static int print_one(const char *name, size_t offset, void *ctx)
{
	unsigned long long v;
	memcpy(&v, (char *)ctx + offset, 8);
	printf("%s %llu\n", name, v);
	return 0;
}

/* Prints the object's counters (its u64 globals in .bss) as "NAME VALUE". */
static void print_counters(struct bpf_object *obj)
{
	struct bpf_map *bss = section_map(obj, ".bss");
	static char buf[1 << 16];
	unsigned int key = 0;
	if (!bss || bpf_map__value_size(bss) > sizeof(buf) || bpf_map__lookup_elem(bss, &key, sizeof(key), buf, bpf_map__value_size(bss), 0))
		return;
	for_each_u64(obj, ".bss", print_one, buf);
}

int main(int argc, char **argv)
{
	if (argc < 4) {
		fprintf(stderr, "usage: %s OBJECT OPS OUT [NAME=VALUE...]\n", argv[0]);
		return 2;
	}
	/* Gone with the run that started it, however it ends (SIGKILL included). */
	prctl(PR_SET_PDEATHSIG, SIGTERM);
	libbpf_set_strict_mode(LIBBPF_STRICT_ALL);
	struct bpf_object *obj = bpf_object__open_file(argv[1], NULL);
	if (!obj) {
		fprintf(stderr, "cannot open %s: %s\n", argv[1], strerror(errno));
		return 1;
	}
	for (int i = 4; i < argc; i++) {
		char *eq = strchr(argv[i], '=');
		char *end;
		if (!eq) {
			fprintf(stderr, "parameter %s: expected NAME=VALUE\n", argv[i]);
			return 2;
		}
		*eq = 0;
		unsigned long long value = strtoull(eq + 1, &end, 0);
		if (*end || eq[1] == 0) {
			fprintf(stderr, "parameter %s = %s: expected an unsigned integer\n", argv[i], eq + 1);
			return 2;
		}
		if (set_param(obj, argv[i], value))
			return 2;
	}
	const char *target = argv[2];
	int tc = strncmp(target, "tc:", 3) == 0;
	int trace = strcmp(target, "trace") == 0;
	struct bpf_map *ops = tc || trace ? NULL : bpf_object__find_map_by_name(obj, target);
	struct bpf_program *prog = tc ? bpf_object__find_program_by_name(obj, "mark") : NULL;
	unsigned int ifindex = tc ? if_nametoindex(target + 3) : 0;
	if (tc && (!prog || !ifindex)) {
		fprintf(stderr, "%s: %s\n", target, !prog ? "the object has no program mark" : "no such interface");
		return 2;
	}
	if (!tc && !trace && (!ops || bpf_map__type(ops) != BPF_MAP_TYPE_STRUCT_OPS)) {
		fprintf(stderr, "%s has no struct_ops %s\n", argv[1], target);
		return 2;
	}
	/* Only the controller asked for is created and registered. */
	struct bpf_map *map;
	bpf_object__for_each_map(map, obj)
	{
		if (bpf_map__type(map) == BPF_MAP_TYPE_STRUCT_OPS && map != ops)
			bpf_map__set_autocreate(map, false);
	}
	if (bpf_object__load(obj)) {
		fprintf(stderr, "cannot load %s: %s\n", argv[1], strerror(errno));
		return 1;
	}
	FILE *out = fopen(argv[3], "wb");
	if (!out) {
		fprintf(stderr, "cannot write %s: %s\n", argv[3], strerror(errno));
		return 1;
	}
	struct ring_buffer *rb = ring_buffer__new(bpf_object__find_map_fd_by_name(obj, "events"), write_record, out, NULL);
	if (!rb) {
		fprintf(stderr, "cannot open the ring buffer: %s\n", strerror(errno));
		return 1;
	}
	signal(SIGINT, on_signal);
	signal(SIGTERM, on_signal);
	struct bpf_link *link = NULL;
	DECLARE_LIBBPF_OPTS(bpf_tc_hook, hook, .ifindex = ifindex, .attach_point = BPF_TC_EGRESS);
	DECLARE_LIBBPF_OPTS(bpf_tc_opts, attach, .handle = 1, .priority = 1);
	if (tc) {
		int err = bpf_tc_hook_create(&hook);
		if (err && err != -EEXIST) {
			fprintf(stderr, "cannot add clsact to %s: %s\n", target + 3, strerror(-err));
			return 1;
		}
		attach.prog_fd = bpf_program__fd(prog);
		if ((err = bpf_tc_attach(&hook, &attach))) {
			fprintf(stderr, "cannot attach to %s: %s\n", target + 3, strerror(-err));
			return 1;
		}
	} else if (trace) {
		struct bpf_program *p;
		bpf_object__for_each_program(p, obj)
		{
			if (!(link = bpf_program__attach(p))) {
				fprintf(stderr, "cannot attach %s: %s\n", bpf_program__name(p), strerror(errno));
				return 1;
			}
		}
	} else if (!(link = bpf_map__attach_struct_ops(ops))) {
		fprintf(stderr, "cannot register %s: %s\n", target, strerror(errno));
		return 1;
	}
	printf("ready\n");
	fflush(stdout);
	int err = 0;
	while (!stop) {
		err = ring_buffer__poll(rb, 100);
		if (err == -EINTR) {
			err = 0;
			continue;
		}
		if (err < 0)
			break;
		err = 0;
	}
	if (tc) {
		attach.prog_fd = attach.prog_id = attach.flags = 0;
		bpf_tc_detach(&hook, &attach);
		hook.attach_point = BPF_TC_INGRESS | BPF_TC_EGRESS;
		bpf_tc_hook_destroy(&hook);
	} else {
		bpf_link__destroy(link);
	}
	while (ring_buffer__consume(rb) > 0)
		;
	ring_buffer__free(rb);
	if (fclose(out)) {
		fprintf(stderr, "cannot write %s: %s\n", argv[3], strerror(errno));
		err = -1;
	}
	print_counters(obj);
	bpf_object__close(obj);
	return err < 0 ? 1 : 0;
}
