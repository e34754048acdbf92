// The floor of a SYN-flood server's per-SYN cost on a TUN device (issue 15 item 2,
// docs/benchmarks.md "SYN flood"): reads each SYN and writes back a SYN-ACK made in
// place (addresses and ports swapped, checksums right), with no stack at all.
//   synecho DEV rw|uring [BATCH]
// rw: one read() and one write() per packet, as KernelDevice does today.
// uring: io_uring as a batching system call: BATCH reads (RWF_NOWAIT) in one
// io_uring_enter, then the SYN-ACKs' writes in a second. Env: UR_FIXED (any value,
// even empty) registers the fd; UR_FLAGS sets io_uring_setup flags.
// A measurement prototype in C, not built by CMake: gcc -O2 -o synecho synecho.c
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <linux/if.h>
#include <linux/if_tun.h>
#include <linux/io_uring.h>
#include <poll.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <sys/uio.h>
#include <unistd.h>

static volatile sig_atomic_t stop;
static void on_sig(int s) {
  (void)s;
  stop = 1;
}
static uint16_t csum(const uint8_t* p, int n, uint32_t s) {
  for (int i = 0; i + 1 < n; i += 2)
    s += (p[i] << 8) | p[i + 1];
  if (n & 1)
    s += p[n - 1] << 8;
  while (s >> 16)
    s = (s & 0xffff) + (s >> 16);
  return ~s;
}
static int make_reply(uint8_t* b, int n) {
  if (n < 40 || (b[0] >> 4) != 4)
    return 0;
  int ihl = (b[0] & 15) * 4;
  uint8_t* t = b + ihl;
  uint8_t tmp[4];
  memcpy(tmp, b + 12, 4);
  memcpy(b + 12, b + 16, 4);
  memcpy(b + 16, tmp, 4);
  uint8_t p[2];
  memcpy(p, t, 2);
  memcpy(t, t + 2, 2);
  memcpy(t + 2, p, 2);
  uint32_t seq = (t[4] << 24) | (t[5] << 16) | (t[6] << 8) | t[7];
  seq++;
  t[8] = seq >> 24;
  t[9] = seq >> 16;
  t[10] = seq >> 8;
  t[11] = seq;
  t[13] = 0x12;
  b[10] = b[11] = 0;
  uint16_t c = csum(b, ihl, 0);
  b[10] = c >> 8;
  b[11] = c;
  t[16] = t[17] = 0;
  uint32_t ps = 0;
  ps += (b[12] << 8) | b[13];
  ps += (b[14] << 8) | b[15];
  ps += (b[16] << 8) | b[17];
  ps += (b[18] << 8) | b[19];
  ps += 6;
  ps += n - ihl;
  c = csum(t, n - ihl, ps);
  t[16] = c >> 8;
  t[17] = c;
  return n;
}
struct ring {
  unsigned *sq_head, *sq_tail, *sq_mask, *sq_array, *cq_head, *cq_tail, *cq_mask;
  struct io_uring_sqe* sqes;
  struct io_uring_cqe* cqes;
  int fd;
};
static int ur_setup(struct ring* r, unsigned entries) {
  struct io_uring_params p;
  memset(&p, 0, sizeof p);
  if (getenv("UR_FLAGS"))
    p.flags = strtoul(getenv("UR_FLAGS"), 0, 0);
  r->fd = syscall(__NR_io_uring_setup, entries, &p);
  if (r->fd < 0) {
    perror("setup");
    exit(1);
  }
  size_t sl = p.sq_off.array + p.sq_entries * 4,
         cl = p.cq_off.cqes + p.cq_entries * sizeof(struct io_uring_cqe);
  uint8_t* sq =
      mmap(0, sl, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_POPULATE, r->fd, IORING_OFF_SQ_RING);
  uint8_t* cq = (p.features & IORING_FEAT_SINGLE_MMAP)
                    ? sq
                    : mmap(0, cl, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_POPULATE, r->fd,
                           IORING_OFF_CQ_RING);
  if (p.features & IORING_FEAT_SINGLE_MMAP && cl > sl) {
    munmap(sq, sl);
    sq = cq =
        mmap(0, cl, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_POPULATE, r->fd, IORING_OFF_SQ_RING);
  }
  r->sqes = mmap(0, p.sq_entries * sizeof(struct io_uring_sqe), PROT_READ | PROT_WRITE,
                 MAP_SHARED | MAP_POPULATE, r->fd, IORING_OFF_SQES);
  r->sq_head = (unsigned*)(sq + p.sq_off.head);
  r->sq_tail = (unsigned*)(sq + p.sq_off.tail);
  r->sq_mask = (unsigned*)(sq + p.sq_off.ring_mask);
  r->sq_array = (unsigned*)(sq + p.sq_off.array);
  r->cq_head = (unsigned*)(cq + p.cq_off.head);
  r->cq_tail = (unsigned*)(cq + p.cq_off.tail);
  r->cq_mask = (unsigned*)(cq + p.cq_off.ring_mask);
  r->cqes = (struct io_uring_cqe*)(cq + p.cq_off.cqes);
  return 0;
}
static void ur_push(struct ring* r, int op, int fd, void* buf, unsigned len, uint64_t ud,
                    int rwflags) {
  unsigned tail = *r->sq_tail, idx = tail & *r->sq_mask;
  struct io_uring_sqe* s = &r->sqes[idx];
  memset(s, 0, sizeof *s);
  s->opcode = op;
  s->fd = fd;
  if (fd == 0 && getenv("UR_FIXED"))
    s->flags |= IOSQE_FIXED_FILE;
  s->addr = (uint64_t)buf;
  s->len = len;
  s->user_data = ud;
  s->rw_flags = rwflags;
  s->off = -1;
  r->sq_array[idx] = idx;
  atomic_store_explicit((_Atomic unsigned*)r->sq_tail, tail + 1, memory_order_release);
}
int main(int argc, char** argv) {
  const char* dev = argv[1];
  int uring = strcmp(argv[2], "uring") == 0;
  int batch = argc > 3 ? atoi(argv[3]) : 64;
  int fd = open("/dev/net/tun", O_RDWR | O_NONBLOCK);
  struct ifreq ifr;
  memset(&ifr, 0, sizeof ifr);
  strncpy(ifr.ifr_name, dev, IFNAMSIZ - 1);
  ifr.ifr_flags = IFF_TUN | IFF_NO_PI;
  if (ioctl(fd, TUNSETIFF, &ifr) < 0) {
    perror("TUNSETIFF");
    return 1;
  }
  ioctl(fd, TUNSETOFFLOAD, 0);
  signal(SIGINT, on_sig);
  signal(SIGTERM, on_sig);
  static uint8_t bufs[256][2048];
  static int lens[256];
  unsigned long long in = 0, out = 0, wake = 0, enters = 0;
  struct ring r;
  int ufd = fd;
  if (uring) {
    ur_setup(&r, 1024);
    if (getenv("UR_FIXED")) {
      if (syscall(__NR_io_uring_register, r.fd, IORING_REGISTER_FILES, &fd, 1) < 0)
        perror("reg");
      ufd = 0;
    }
  }
  fprintf(stderr, "ready\n");
  while (!stop) {
    struct pollfd pf = {fd, POLLIN, 0};
    if (poll(&pf, 1, 100) <= 0)
      continue;
    wake++;
    if (!uring) {
      for (int i = 0; i < batch; i++) {
        int n = read(fd, bufs[0], 2048);
        if (n <= 0)
          break;
        in++;
        n = make_reply(bufs[0], n);
        if (n > 0 && write(fd, bufs[0], n) > 0)
          out++;
      }
    } else {
      for (int i = 0; i < batch; i++)
        ur_push(&r, IORING_OP_READ, ufd, bufs[i], 2048, i, RWF_NOWAIT);
      syscall(__NR_io_uring_enter, r.fd, batch, batch, IORING_ENTER_GETEVENTS, NULL, 0);
      enters++;
      int got = 0;
      unsigned h = *r.cq_head,
               t = atomic_load_explicit((_Atomic unsigned*)r.cq_tail, memory_order_acquire);
      for (; h != t; h++) {
        struct io_uring_cqe* c = &r.cqes[h & *r.cq_mask];
        if (c->res > 0) {
          lens[c->user_data] = c->res;
        } else
          lens[c->user_data] = 0;
      }
      atomic_store_explicit((_Atomic unsigned*)r.cq_head, h, memory_order_release);
      int nw = 0;
      for (int i = 0; i < batch; i++)
        if (lens[i] > 0) {
          in++;
          int n = make_reply(bufs[i], lens[i]);
          if (n > 0) {
            ur_push(&r, IORING_OP_WRITE, ufd, bufs[i], n, 1000 + i, 0);
            nw++;
          }
        }
      if (nw) {
        syscall(__NR_io_uring_enter, r.fd, nw, nw, IORING_ENTER_GETEVENTS, NULL, 0);
        enters++;
        h = *r.cq_head;
        t = atomic_load_explicit((_Atomic unsigned*)r.cq_tail, memory_order_acquire);
        for (; h != t; h++) {
          struct io_uring_cqe* c = &r.cqes[h & *r.cq_mask];
          if (c->res > 0)
            out++;
          else if (out < 5)
            fprintf(stderr, "write %d\n", c->res);
        }
        atomic_store_explicit((_Atomic unsigned*)r.cq_head, h, memory_order_release);
      }
      (void)got;
    }
  }
  printf("synecho: %llu in, %llu out, %llu wakeups, %llu enters\n", in, out, wake, enters);
  return 0;
}
