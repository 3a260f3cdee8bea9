/* confine_linux.c - Landlock, capabilities and a seccomp filter.
 *
 * Landlock's structures are declared here, not taken from <linux/
 * landlock.h>: Debian 12's headers stop at ABI 3, and the network (ABI 4)
 * and scope (ABI 6) restrictions are asked for wherever the running kernel
 * has them. */
#include "common/confine.h"

#include <errno.h>
#include <fcntl.h>
#include <linux/audit.h>
#include <linux/capability.h>
#include <linux/filter.h>
#include <linux/fs.h>
#include <linux/seccomp.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <sys/ioctl.h>
#include <termios.h>
#include <time.h>
#include <unistd.h>

#include "common/anchor_linux.h"

/* ---- Landlock ---- */

#define LL_CREATE_RULESET_VERSION (1u << 0)
#define LL_RULE_PATH_BENEATH 1

#define LL_FS_EXECUTE (1ull << 0)
#define LL_FS_WRITE_FILE (1ull << 1)
#define LL_FS_READ_FILE (1ull << 2)
#define LL_FS_READ_DIR (1ull << 3)
#define LL_FS_TRUNCATE (1ull << 14)
#define LL_FS_IOCTL_DEV (1ull << 15)
#define LL_READ (LL_FS_READ_FILE | LL_FS_READ_DIR)
/* the rights a rule on a file (not a folder) may hold */
#define LL_FILE_RIGHTS (LL_FS_EXECUTE | LL_FS_WRITE_FILE | LL_FS_READ_FILE | LL_FS_TRUNCATE | \
			LL_FS_IOCTL_DEV)

#define LL_NET_BIND_TCP (1ull << 0)
#define LL_NET_CONNECT_TCP (1ull << 1)
#define LL_SCOPE_ABSTRACT_UNIX_SOCKET (1ull << 0)
#define LL_SCOPE_SIGNAL (1ull << 1)

struct ll_ruleset_attr {
	uint64_t handled_access_fs;
	uint64_t handled_access_net; /* ABI 4 */
	uint64_t scoped;             /* ABI 6 */
};

struct ll_path_beneath_attr {
	uint64_t allowed_access;
	int32_t parent_fd;
} __attribute__((packed));

#ifndef SYS_landlock_create_ruleset
#define SYS_landlock_create_ruleset 444
#define SYS_landlock_add_rule 445
#define SYS_landlock_restrict_self 446
#endif

/* Every file-system right the ABI knows: 1 has bits 0-12, 2 adds REFER,
 * 3 TRUNCATE, 5 IOCTL_DEV. */
static uint64_t ll_fs_rights(long abi)
{
	uint64_t all = (1ull << 13) - 1;
	if (abi >= 2)
		all |= 1ull << 13;
	if (abi >= 3)
		all |= LL_FS_TRUNCATE;
	if (abi >= 5)
		all |= LL_FS_IOCTL_DEV;
	return all;
}

/* Allow access below the object fd (a folder, or a file: then only the
 * file rights apply). */
static int ll_allow_fd(int rs, int fd, uint64_t access, uint64_t handled, int is_dir)
{
	struct ll_path_beneath_attr pb;

	memset(&pb, 0, sizeof(pb));
	pb.allowed_access = access & handled & (is_dir ? ~0ull : LL_FILE_RIGHTS);
	pb.parent_fd = fd;
	if (syscall(SYS_landlock_add_rule, rs, LL_RULE_PATH_BENEATH, &pb, 0) != 0)
		return errno;
	return 0;
}

/* The same by path; a path this machine lacks allows nothing, quietly. */
static int ll_allow(int rs, const char *path, uint64_t access, uint64_t handled)
{
	struct stat st;
	int fd = open(path, O_PATH | O_CLOEXEC), e;

	if (fd < 0)
		return errno == ENOENT ? 0 : errno;
	e = fstat(fd, &st) != 0 ? errno : ll_allow_fd(rs, fd, access, handled, S_ISDIR(st.st_mode));
	close(fd);
	return e;
}

/* What the walk, the locate pass and the device probe read (CONFINE_SCAN
 * only), each with why. */
static const struct {
	const char *path;
	uint64_t access;
} scan_reads[] = {
	/* the device probe: block devices, rotational, partitions, slaves;
	 * the memory limit (cgroup) */
	{"/sys", LL_READ},
	/* file system ids by UUID (links read, never the devices) */
	{"/dev/disk", LL_READ},
	/* SQLite's random numbers, at its first open */
	{"/dev/urandom", LL_FS_READ_FILE},
	/* shared libraries a library loads late (libgcc_s for unwinding) */
	{"/usr/lib", LL_READ | LL_FS_EXECUTE},
	{"/lib", LL_READ | LL_FS_EXECUTE},
	{"/lib64", LL_READ | LL_FS_EXECUTE},
};

/* The layer of stage, restricting this process from now on. */
static int landlock(enum confine_stage stage, const struct confine *c, long abi, char *how,
		    size_t cap)
{
	struct ll_ruleset_attr attr;
	size_t i, attr_size, used;
	uint64_t fs = ll_fs_rights(abi);
	int rs, e = 0;

	memset(&attr, 0, sizeof(attr));
	attr.handled_access_fs = fs;
	attr_size = sizeof(attr.handled_access_fs);
	if (abi >= 4) {
		/* no rule for any port: no TCP, in or out */
		attr.handled_access_net = LL_NET_BIND_TCP | LL_NET_CONNECT_TCP;
		attr_size = offsetof(struct ll_ruleset_attr, scoped);
	}
	if (abi >= 6) {
		attr.scoped = LL_SCOPE_ABSTRACT_UNIX_SOCKET | LL_SCOPE_SIGNAL;
		attr_size = sizeof(attr);
	}
	rs = (int)syscall(SYS_landlock_create_ruleset, &attr, attr_size, 0);
	if (rs < 0) {
		e = errno;
		snprintf(how, cap, "Landlock ruleset refused (%s)", strerror(e));
		return e;
	}
	for (i = 0; !e && i < c->nroots; i++)
		if (c->roots[i] && anchor_fd(c->roots[i]) >= 0)
			e = ll_allow_fd(rs, anchor_fd(c->roots[i]), LL_READ, fs, 1);
	if (!e)
		e = ll_allow(rs, c->write_dir, fs, fs);
	/* /proc, for this process's own entry: the mount table, the I/O
	 * counters, the memory limit's cgroup, the sanitizers' maps.  Not
	 * /proc/<pid> alone: procfs makes a new inode for it whenever its
	 * dentry is dropped, and a rule on the old one then stops matching in
	 * the middle of a long scan.  Other processes' entries stay closed
	 * where it matters: Landlock refuses a sandboxed process ptrace
	 * access, which /proc/<pid>/environ, mem, fd and the like need. */
	if (!e)
		e = ll_allow(rs, "/proc", LL_READ, fs);
	for (i = 0; !e && stage == CONFINE_SCAN && i < sizeof(scan_reads) / sizeof(scan_reads[0]);
	     i++)
		e = ll_allow(rs, scan_reads[i].path, scan_reads[i].access, fs);
	for (i = 0; !e && i < c->nread_files; i++)
		e = ll_allow(rs, c->read_files[i], LL_FS_READ_FILE, fs);
	if (!e && prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) != 0)
		e = errno;
	if (!e && syscall(SYS_landlock_restrict_self, rs, 0) != 0)
		e = errno;
	close(rs);
	if (e) {
		snprintf(how, cap, "Landlock rule failed (%s)", strerror(e));
		return e;
	}
	used = (size_t)snprintf(how, cap, "Landlock ABI %ld: ", abi);
	if (used < cap)
		snprintf(how + used, cap - used, "%s read-only, %s read-write%s%s",
			 stage == CONFINE_SCAN ? "roots and system files" : "roots only",
			 c->write_dir, abi >= 4 ? ", no TCP" : " (TCP not restricted: ABI < 4)",
			 abi >= 6 ? ", no signals out" : "");
	return 0;
}

/* ---- capabilities ---- */

/* Keep CAP_DAC_READ_SEARCH and CAP_FOWNER of what the process has, and no
 * other, in every set (the bounding set too, where CAP_SETPCAP allows). */
static int drop_caps(char *how, size_t cap)
{
	const uint32_t keep = (1u << CAP_DAC_READ_SEARCH) | (1u << CAP_FOWNER);
	struct __user_cap_header_struct hdr;
	struct __user_cap_data_struct data[2];
	int c, bounding = 1;

	memset(&hdr, 0, sizeof(hdr));
	memset(data, 0, sizeof(data));
	hdr.version = _LINUX_CAPABILITY_VERSION_3;
	if (syscall(SYS_capget, &hdr, data) != 0) {
		snprintf(how, cap, "capabilities unknown (%s)", strerror(errno));
		return errno;
	}
	for (c = 0; c < 64; c++) {
		if (c < 32 && (keep & (1u << c)))
			continue;
		if (prctl(PR_CAPBSET_DROP, c, 0, 0, 0) != 0) {
			if (errno == EINVAL)
				break; /* past the last capability this kernel has */
			bounding = 0;
		}
	}
	prctl(PR_CAP_AMBIENT, PR_CAP_AMBIENT_CLEAR_ALL, 0, 0, 0);
	data[0].effective &= keep;
	data[0].permitted &= keep;
	data[0].inheritable = 0;
	data[1].effective = data[1].permitted = data[1].inheritable = 0;
	if (syscall(SYS_capset, &hdr, data) != 0) {
		snprintf(how, cap, "capabilities not dropped (%s)", strerror(errno));
		return errno;
	}
	snprintf(how, cap, "capabilities: %s%s%s", data[0].permitted ? "" : "none",
		 data[0].permitted & (1u << CAP_DAC_READ_SEARCH) ? "CAP_DAC_READ_SEARCH " : "",
		 data[0].permitted & (1u << CAP_FOWNER) ? "CAP_FOWNER" : "");
	if (!bounding && strlen(how) + 40 < cap)
		strcat(how, " (bounding set kept: no CAP_SETPCAP)");
	return 0;
}

/* ---- seccomp ---- */

#if defined(__x86_64__)
#define SL_AUDIT_ARCH AUDIT_ARCH_X86_64
#elif defined(__aarch64__)
#define SL_AUDIT_ARCH AUDIT_ARCH_AARCH64
#elif defined(__i386__)
#define SL_AUDIT_ARCH AUDIT_ARCH_I386
#elif defined(__riscv) && __riscv_xlen == 64
#define SL_AUDIT_ARCH AUDIT_ARCH_RISCV64
#endif

#ifdef SL_AUDIT_ARCH

/* Calls no reader, parser or SQLite makes, refused with EPERM.  Kept as
 * numbers this architecture defines (an absent one cannot be made). */
static const long refused[] = {
#ifdef SYS_socket
	SYS_socket, /* no network, and no local socket: nothing to talk to */
#endif
#ifdef SYS_socketpair
	SYS_socketpair,
#endif
#if !defined(__SANITIZE_ADDRESS__)
	SYS_ptrace, /* (LeakSanitizer stops the threads with it) */
#endif
	SYS_process_vm_readv, SYS_process_vm_writev,
#ifdef SYS_pidfd_open
	SYS_pidfd_open, SYS_pidfd_send_signal, SYS_pidfd_getfd,
#endif
	SYS_tkill,
	SYS_mount, SYS_umount2, SYS_pivot_root, SYS_chroot, SYS_swapon, SYS_swapoff, SYS_reboot,
#ifdef SYS_open_tree
	SYS_open_tree, SYS_move_mount, SYS_fsopen, SYS_fsconfig, SYS_fsmount, SYS_fspick,
#endif
#ifdef SYS_mount_setattr
	SYS_mount_setattr,
#endif
	SYS_kexec_load,
#ifdef SYS_kexec_file_load
	SYS_kexec_file_load,
#endif
	SYS_init_module, SYS_finit_module, SYS_delete_module, SYS_bpf, SYS_perf_event_open,
	SYS_userfaultfd, SYS_keyctl, SYS_add_key, SYS_request_key, SYS_setns, SYS_unshare,
	/* CAP_DAC_READ_SEARCH opens any file by handle, around every path
	 * rule */
	SYS_open_by_handle_at, SYS_name_to_handle_at,
#ifdef SYS_iopl
	SYS_iopl, SYS_ioperm,
#endif
	SYS_personality, SYS_acct, SYS_quotactl, SYS_settimeofday, SYS_clock_settime,
	SYS_clock_adjtime, SYS_adjtimex, SYS_sethostname, SYS_setdomainname,
	/* what CAP_FOWNER would allow on any file, and what would change a
	 * tree: Landlock does not govern modes, owners, times or attributes */
#ifdef SYS_mknod
	SYS_mknod, SYS_chown, SYS_lchown, SYS_chmod, SYS_link, SYS_symlink, SYS_rename,
	SYS_utime, SYS_utimes, SYS_futimesat,
#endif
	SYS_mknodat, SYS_fchown, SYS_fchownat, SYS_fchmod, SYS_fchmodat, SYS_linkat,
	SYS_symlinkat, SYS_renameat, SYS_renameat2, SYS_utimensat, SYS_setxattr,
	SYS_lsetxattr, SYS_fsetxattr, SYS_removexattr, SYS_lremovexattr, SYS_fremovexattr,
};

/* The calls a scan makes most, let through first: the filter runs at
 * every call, in order, and these would otherwise pass every test below. */
static const long hot[] = {
#ifdef SYS_pread64
	SYS_pread64,
#endif
	SYS_read, SYS_write, SYS_futex, SYS_close, SYS_openat, SYS_statx, SYS_lseek,
	SYS_mmap, SYS_munmap, SYS_madvise, SYS_fadvise64, SYS_newfstatat, SYS_fstat,
#ifdef SYS_openat2
	SYS_openat2,
#endif
};

/* ioctl requests refused: file flags (chattr), project ids, fs-verity and
 * encryption policies (each allowed to a file's owner, so to CAP_FOWNER),
 * and pushing input into a terminal. */
static const unsigned long refused_ioctls[] = {
	FS_IOC_SETFLAGS, FS_IOC32_SETFLAGS, FS_IOC_FSSETXATTR, FS_IOC_SETVERSION,
	FS_IOC32_SETVERSION, TIOCSTI,
#ifdef FS_IOC_SET_ENCRYPTION_POLICY
	FS_IOC_SET_ENCRYPTION_POLICY,
#endif
#ifdef FS_IOC_ENABLE_VERITY
	FS_IOC_ENABLE_VERITY,
#endif
};

/* Signals only to this process itself (kill, tgkill, rt_*sigqueueinfo
 * with pid/tgid arg 0 = ours); fcntl F_SETLEASE refused (a lease on
 * someone else's file is CAP_FOWNER's). */
static const long self_only[] = {SYS_kill, SYS_tgkill, SYS_rt_sigqueueinfo,
				 SYS_rt_tgsigqueueinfo};

#define NREF (sizeof(refused) / sizeof(refused[0]))
#define NIOC (sizeof(refused_ioctls) / sizeof(refused_ioctls[0]))
#define NSELF (sizeof(self_only) / sizeof(self_only[0]))
#define NHOT (sizeof(hot) / sizeof(hot[0]))
#define PROG_MAX (24 + NHOT + 2 * NREF + 5 * NSELF + 2 * NIOC)
/* new namespaces: a user namespace would hand back every capability inside */
#define CLONE_NEW_ANY 0x7e020000u /* NEWNS|NEWCGROUP|NEWUTS|NEWIPC|NEWUSER|NEWPID|NEWNET */

#define STMT(code, k) ((struct sock_filter)BPF_STMT((code), (k)))
#define JUMP(code, k, jt, jf) ((struct sock_filter)BPF_JUMP((code), (k), (jt), (jf)))
#define ARG0_LO offsetof(struct seccomp_data, args[0])
#define ARG1_LO offsetof(struct seccomp_data, args[1])

static int seccomp_filter(char *how, size_t cap)
{
	struct sock_filter prog[PROG_MAX];
	struct sock_fprog fp;
	uint32_t pid = (uint32_t)getpid();
	size_t n = 0, i;

	prog[n++] = STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(struct seccomp_data, arch));
	prog[n++] = JUMP(BPF_JMP | BPF_JEQ | BPF_K, SL_AUDIT_ARCH, 1, 0);
	prog[n++] = STMT(BPF_RET | BPF_K, SECCOMP_RET_KILL_PROCESS);
	prog[n++] = STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(struct seccomp_data, nr));
#if defined(__x86_64__)
	/* the x32 ABI's numbers: none of ours */
	prog[n++] = JUMP(BPF_JMP | BPF_JGE | BPF_K, 0x40000000u, 0, 1);
	prog[n++] = STMT(BPF_RET | BPF_K, SECCOMP_RET_ERRNO | EPERM);
#endif
	/* the hot calls: straight to an ALLOW past the others */
	for (i = 0; i < NHOT; i++)
		prog[n++] = JUMP(BPF_JMP | BPF_JEQ | BPF_K, (uint32_t)hot[i],
				 (uint8_t)(NHOT - 1 - i + 1), 0);
	prog[n++] = STMT(BPF_JMP | BPF_JA, 1);
	prog[n++] = STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW);
	for (i = 0; i < NREF; i++) {
		prog[n++] = JUMP(BPF_JMP | BPF_JEQ | BPF_K, (uint32_t)refused[i], 0, 1);
		prog[n++] = STMT(BPF_RET | BPF_K, SECCOMP_RET_ERRNO | EPERM);
	}
	for (i = 0; i < NSELF; i++) {
		prog[n++] = JUMP(BPF_JMP | BPF_JEQ | BPF_K, (uint32_t)self_only[i], 0, 4);
		prog[n++] = STMT(BPF_LD | BPF_W | BPF_ABS, ARG0_LO);
		prog[n++] = JUMP(BPF_JMP | BPF_JEQ | BPF_K, pid, 0, 1);
		prog[n++] = STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW);
		prog[n++] = STMT(BPF_RET | BPF_K, SECCOMP_RET_ERRNO | EPERM);
	}
	/* clone3's flags are out of reach (in memory): ENOSYS sends the C
	 * library back to clone, whose flags can be looked at */
#ifdef SYS_clone3
	prog[n++] = JUMP(BPF_JMP | BPF_JEQ | BPF_K, SYS_clone3, 0, 1);
	prog[n++] = STMT(BPF_RET | BPF_K, SECCOMP_RET_ERRNO | ENOSYS);
#endif
	prog[n++] = JUMP(BPF_JMP | BPF_JEQ | BPF_K, SYS_clone, 0, 4);
	prog[n++] = STMT(BPF_LD | BPF_W | BPF_ABS, ARG0_LO);
	prog[n++] = JUMP(BPF_JMP | BPF_JSET | BPF_K, CLONE_NEW_ANY, 0, 1);
	prog[n++] = STMT(BPF_RET | BPF_K, SECCOMP_RET_ERRNO | EPERM);
	prog[n++] = STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW);
	/* fcntl F_SETLEASE */
	prog[n++] = JUMP(BPF_JMP | BPF_JEQ | BPF_K, SYS_fcntl, 0, 3);
	prog[n++] = STMT(BPF_LD | BPF_W | BPF_ABS, ARG1_LO);
	prog[n++] = JUMP(BPF_JMP | BPF_JEQ | BPF_K, F_SETLEASE, 0, (uint8_t)(NIOC * 2 + 3));
	prog[n++] = STMT(BPF_RET | BPF_K, SECCOMP_RET_ERRNO | EPERM);
	/* ioctl requests */
	prog[n++] = JUMP(BPF_JMP | BPF_JEQ | BPF_K, SYS_ioctl, 0, (uint8_t)(NIOC * 2 + 1));
	prog[n++] = STMT(BPF_LD | BPF_W | BPF_ABS, ARG1_LO);
	for (i = 0; i < NIOC; i++) {
		prog[n++] = JUMP(BPF_JMP | BPF_JEQ | BPF_K, (uint32_t)refused_ioctls[i], 0, 1);
		prog[n++] = STMT(BPF_RET | BPF_K, SECCOMP_RET_ERRNO | EPERM);
	}
	prog[n++] = STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW);
	fp.len = (unsigned short)n;
	fp.filter = prog;
	if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) != 0 ||
	    prctl(PR_SET_SECCOMP, SECCOMP_MODE_FILTER, &fp, 0, 0) != 0) {
		int e = errno;
		snprintf(how, cap, "seccomp refused (%s)", strerror(e));
		return e;
	}
	snprintf(how, cap, "seccomp: %zu calls refused, signals to itself only, no new namespaces",
		 NREF + 2);
	return 0;
}

#else

static int seccomp_filter(char *how, size_t cap)
{
	snprintf(how, cap, "seccomp: not on this architecture");
	return ENOSYS;
}

#endif

int confine(enum confine_stage stage, const struct confine *c, char *how, size_t cap)
{
	long abi = syscall(SYS_landlock_create_ruleset, NULL, 0, LL_CREATE_RULESET_VERSION);
	char part[3][320];
	int e = 0, r;

	memset(part, 0, sizeof(part));
	/* read while /etc is readable: the summary's times */
	tzset();
	/* SQLite's temporary files must go where writing is allowed */
	if (c->write_dir && setenv("SQLITE_TMPDIR", c->write_dir, 1) != 0)
		e = errno;
	if (abi < 1) {
		r = errno;
		snprintf(part[0], sizeof(part[0]), "no Landlock (%s)",
			 r == ENOSYS ? "kernel without it" : r == EOPNOTSUPP ? "disabled at boot"
										 : strerror(r));
		e = e ? e : ENOSYS;
	} else if ((r = landlock(stage, c, abi, part[0], sizeof(part[0]))) != 0) {
		e = e ? e : r;
	}
	if (stage == CONFINE_READ) {
		if ((r = drop_caps(part[1], sizeof(part[1]))) != 0 && !e)
			e = r;
		if ((r = seccomp_filter(part[2], sizeof(part[2]))) != 0 && !e)
			e = r;
	}
	snprintf(how, cap, "%s%s%s%s%s", part[0], part[1][0] ? "; " : "", part[1],
		 part[2][0] ? "; " : "", part[2]);
	return e;
}
