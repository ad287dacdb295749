import { arch } from 'node:os';

/**
 * The seccomp filter bwrap installs on the jailed interpreter (`--seccomp`), as classic BPF: one
 * process per run, so the per-process limits (CPU, address space) are the run's. Creating a
 * process, and the calls that reach past the tracer or the namespaces, end in SIGSYS
 * (SECCOMP_RET_TRAP): the kernel's signal names the call, the tracer outside sees it delivered
 * whatever the plugin does with it, and by default it ends the process. Threads stay allowed.
 * x86-64 only: another architecture has other numbers, and the self-check says so.
 */

const BPF_LD_W_ABS = 0x20;
const BPF_JMP_JEQ_K = 0x15;
const BPF_JMP_JGE_K = 0x35;
const BPF_JMP_JSET_K = 0x45;
const BPF_RET_K = 0x06;

const SECCOMP_RET_KILL_PROCESS = 0x80000000;
const SECCOMP_RET_TRAP = 0x00030000;
const SECCOMP_RET_ERRNO = 0x00050000;
const SECCOMP_RET_ALLOW = 0x7fff0000;
const ENOSYS = 38;

/** struct seccomp_data: nr, arch, instruction pointer, then args[0] (its low half first on little-endian). */
const NR_OFFSET = 0;
const ARCH_OFFSET = 4;
const ARG0_LOW_OFFSET = 16;

const AUDIT_ARCH_X86_64 = 0xc000003e;
/** x32 system calls: the same kernel entry with this bit set, and numbers of their own. */
const X32_SYSCALL_BIT = 0x40000000;
const CLONE_THREAD = 0x00010000;

/** x86-64 numbers (asm/unistd_64.h). */
const CLONE = 56;
const CLONE3 = 435;
const PRCTL = 157;
/**
 * prctl's way to install a seccomp filter (the `seccomp` call is trapped below): a filter of the
 * plugin's whose SECCOMP_RET_USER_NOTIF outranks the tracer's SECCOMP_RET_TRACE would let a call
 * it continues run unseen.
 */
const PR_SET_SECCOMP = 22;
/**
 * Trapped: new processes (fork, vfork; clone without CLONE_THREAD below), other processes'
 * memory and tracing, namespaces and mounts, kernel programs and keys, io_uring, whose
 * operations run without a system call the tracer could see, and memory the limits miss.
 */
export const TRAPPED_CALLS: Readonly<Record<string, number>> = {
  fork: 57,
  vfork: 58,
  ptrace: 101,
  process_vm_readv: 310,
  process_vm_writev: 311,
  kcmp: 312,
  pidfd_getfd: 438,
  mount: 165,
  umount2: 166,
  pivot_root: 155,
  chroot: 161,
  unshare: 272,
  setns: 308,
  open_tree: 428,
  move_mount: 429,
  fsopen: 430,
  fsconfig: 431,
  fsmount: 432,
  fspick: 433,
  mount_setattr: 442,
  name_to_handle_at: 303,
  open_by_handle_at: 304,
  seccomp: 317,
  bpf: 321,
  perf_event_open: 298,
  userfaultfd: 323,
  io_uring_setup: 425,
  io_uring_enter: 426,
  io_uring_register: 427,
  add_key: 248,
  request_key: 249,
  keyctl: 250,
  kexec_load: 246,
  kexec_file_load: 320,
  init_module: 175,
  finit_module: 313,
  delete_module: 176,
  personality: 135,
  // Memory outside the address-space limit: a memfd's pages, and SysV shared memory and message
  // queues, live on after a detach; the jail's /dev/shm is read-only for the same reason.
  memfd_create: 319,
  shmget: 29,
  msgget: 68,
};

const statement = (code: number, k: number) => ({ code, jt: 0, jf: 0, k });
const jump = (code: number, k: number, jt: number, jf: number) => ({ code, jt, jf, k });

/** The filter as bwrap reads it from a descriptor: struct sock_filter[], little-endian. Null off x86-64. */
export function processFilter(): Buffer | null {
  if (arch() !== 'x64') return null;
  const program = [
    statement(BPF_LD_W_ABS, ARCH_OFFSET),
    jump(BPF_JMP_JEQ_K, AUDIT_ARCH_X86_64, 1, 0),
    statement(BPF_RET_K, SECCOMP_RET_KILL_PROCESS),
    statement(BPF_LD_W_ABS, NR_OFFSET),
    jump(BPF_JMP_JGE_K, X32_SYSCALL_BIT, 0, 1),
    statement(BPF_RET_K, SECCOMP_RET_KILL_PROCESS),
    // clone3's flags are behind a pointer a filter cannot read: ENOSYS, and the C library
    // falls back to clone, whose flags it can.
    jump(BPF_JMP_JEQ_K, CLONE3, 0, 1),
    statement(BPF_RET_K, SECCOMP_RET_ERRNO | ENOSYS),
    jump(BPF_JMP_JEQ_K, CLONE, 0, 4),
    statement(BPF_LD_W_ABS, ARG0_LOW_OFFSET),
    jump(BPF_JMP_JSET_K, CLONE_THREAD, 0, 1),
    statement(BPF_RET_K, SECCOMP_RET_ALLOW),
    statement(BPF_RET_K, SECCOMP_RET_TRAP),
    jump(BPF_JMP_JEQ_K, PRCTL, 0, 4),
    statement(BPF_LD_W_ABS, ARG0_LOW_OFFSET),
    jump(BPF_JMP_JEQ_K, PR_SET_SECCOMP, 0, 1),
    statement(BPF_RET_K, SECCOMP_RET_TRAP),
    statement(BPF_RET_K, SECCOMP_RET_ALLOW),
    ...Object.values(TRAPPED_CALLS).flatMap((nr) => [
      jump(BPF_JMP_JEQ_K, nr, 0, 1),
      statement(BPF_RET_K, SECCOMP_RET_TRAP),
    ]),
    statement(BPF_RET_K, SECCOMP_RET_ALLOW),
  ];
  const bytes = Buffer.alloc(program.length * 8);
  program.forEach(({ code, jt, jf, k }, index) => {
    bytes.writeUInt16LE(code, index * 8);
    bytes.writeUInt8(jt, index * 8 + 2);
    bytes.writeUInt8(jf, index * 8 + 3);
    bytes.writeUInt32LE(k >>> 0, index * 8 + 4);
  });
  return bytes;
}
