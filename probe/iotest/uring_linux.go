//go:build linux

package iotest

import (
	"errors"
	"fmt"
	"sync/atomic"
	"unsafe"

	"golang.org/x/sys/unix"
)

// This file is a minimal io_uring: io_uring_setup, the three mmapped
// regions (submission ring, completion ring, submission entries) and
// io_uring_enter, as raw system calls. Hand-written (~250 lines) because
// the pure-Go libraries (giouring, iouring-go) are not on the Go module
// proxy here and are far larger than the two opcodes the test needs.
// The layouts are those of <linux/io_uring.h>.

// Constants of <linux/io_uring.h>.
const (
	ioringOffSQRing = 0
	ioringOffCQRing = 0x8000000
	ioringOffSQEs   = 0x10000000

	ioringFeatSingleMmap = 1 << 0

	ioringSetupCoopTaskrun  = 1 << 8
	ioringSetupSingleIssuer = 1 << 12
	ioringSetupDeferTaskrun = 1 << 13

	ioringEnterGetevents = 1 << 0

	ioringOpRead  = 22
	ioringOpWrite = 23
)

// uringParams is struct io_uring_params (120 bytes).
type uringParams struct {
	sqEntries, cqEntries, flags, sqThreadCPU, sqThreadIdle, features, wqFd uint32
	resv                                                                   [3]uint32
	sqOff                                                                  sqRingOffsets
	cqOff                                                                  cqRingOffsets
}

// sqRingOffsets is struct io_sqring_offsets.
type sqRingOffsets struct {
	head, tail, ringMask, ringEntries, flags, dropped, array, resv1 uint32
	userAddr                                                        uint64
}

// cqRingOffsets is struct io_cqring_offsets.
type cqRingOffsets struct {
	head, tail, ringMask, ringEntries, overflow, cqes, flags, resv1 uint32
	userAddr                                                        uint64
}

// uringSQE is struct io_uring_sqe (64 bytes).
type uringSQE struct {
	opcode      uint8
	flags       uint8
	ioprio      uint16
	fd          int32
	off         uint64
	addr        uint64
	len         uint32
	rwFlags     uint32
	userData    uint64
	bufIndex    uint16
	personality uint16
	spliceFdIn  int32
	addr3       uint64
	pad         uint64
}

// uringCQE is struct io_uring_cqe (16 bytes).
type uringCQE struct {
	userData uint64
	res      int32
	flags    uint32
}

// errUringUnavailable wraps why io_uring cannot be used here: an old
// kernel (ENOSYS), a sysctl (kernel.io_uring_disabled) or a container's
// seccomp profile (EPERM).
var errUringUnavailable = errors.New("io_uring is not available")

// ring is one io_uring instance, used by one goroutine at a time.
type ring struct {
	fd                   int
	sqMem, cqMem, sqeMem []byte

	sqHead, sqTail *uint32
	sqMask         uint32
	sqArray        []uint32
	sqes           []uringSQE
	tail           uint32 // our copy of *sqTail, published by submit
	queued         uint32 // entries prepared since the last submit

	cqHead, cqTail *uint32
	cqMask         uint32
	cqes           []uringCQE
}

// ringFlags are the setup flags newRing tries first: completions are
// run only when the one submitting thread asks for them, which saves the
// interrupts and wake-ups of task work (Linux 6.1; a plain ring cost 5–10 %
// more CPU per I/O and lost IOPS at iodepth 32 here, docs/benchmarks.md);
// older kernels refuse them with EINVAL and get a plain ring.
const ringFlags = ioringSetupSingleIssuer | ioringSetupDeferTaskrun | ioringSetupCoopTaskrun

// newRing sets up a ring of at least entries submission slots. With
// single-issuer flags the calling goroutine must stay on its thread
// (runtime.LockOSThread) for the ring's life.
func newRing(entries uint32, singleIssuer bool) (*ring, error) {
	flags := uint32(0)
	if singleIssuer {
		flags = ringFlags
	}
	p := uringParams{flags: flags}
	fd, err := uringSetup(entries, &p)
	if errors.Is(err, unix.EINVAL) && flags != 0 {
		p = uringParams{}
		fd, err = uringSetup(entries, &p)
	}
	if err != nil {
		return nil, err
	}
	r := &ring{fd: fd}
	if err := r.mmap(&p); err != nil {
		r.close()
		return nil, err
	}
	return r, nil
}

// uringSetup calls io_uring_setup, naming why it is refused.
func uringSetup(entries uint32, p *uringParams) (int, error) {
	fd, _, errno := unix.Syscall(unix.SYS_IO_URING_SETUP, uintptr(entries), uintptr(unsafe.Pointer(p)), 0)
	switch errno {
	case 0:
		return int(fd), nil
	case unix.ENOSYS:
		return -1, fmt.Errorf("%w: the kernel has no io_uring (io_uring_setup: %v)", errUringUnavailable, errno)
	case unix.EPERM, unix.EACCES:
		return -1, fmt.Errorf("%w: io_uring_setup was refused (%v): the kernel.io_uring_disabled sysctl, "+
			"or a container's seccomp profile, forbids it; use --engine psync", errUringUnavailable, errno)
	}
	return -1, fmt.Errorf("io_uring_setup of %d entries: %w", entries, errno)
}

// mmap maps the rings and the submission entries.
func (r *ring) mmap(p *uringParams) error {
	sqSize := int(p.sqOff.array + p.sqEntries*4)
	cqSize := int(p.cqOff.cqes + p.cqEntries*uint32(unsafe.Sizeof(uringCQE{})))
	single := p.features&ioringFeatSingleMmap != 0
	if single {
		sqSize = max(sqSize, cqSize)
	}
	var err error
	if r.sqMem, err = mapRegion(r.fd, ioringOffSQRing, sqSize); err != nil {
		return err
	}
	r.cqMem = r.sqMem
	if !single {
		if r.cqMem, err = mapRegion(r.fd, ioringOffCQRing, cqSize); err != nil {
			return err
		}
	}
	sqeSize := int(p.sqEntries) * int(unsafe.Sizeof(uringSQE{}))
	if r.sqeMem, err = mapRegion(r.fd, ioringOffSQEs, sqeSize); err != nil {
		return err
	}
	r.sqHead, r.sqTail = word(r.sqMem, p.sqOff.head), word(r.sqMem, p.sqOff.tail)
	r.sqMask = *word(r.sqMem, p.sqOff.ringMask)
	r.sqArray = unsafe.Slice(word(r.sqMem, p.sqOff.array), p.sqEntries)
	r.sqes = unsafe.Slice((*uringSQE)(unsafe.Pointer(&r.sqeMem[0])), p.sqEntries)
	r.cqHead, r.cqTail = word(r.cqMem, p.cqOff.head), word(r.cqMem, p.cqOff.tail)
	r.cqMask = *word(r.cqMem, p.cqOff.ringMask)
	r.cqes = unsafe.Slice((*uringCQE)(unsafe.Pointer(&r.cqMem[p.cqOff.cqes])), p.cqEntries)
	r.tail = atomic.LoadUint32(r.sqTail)
	return nil
}

func mapRegion(fd int, offset int64, size int) ([]byte, error) {
	b, err := unix.Mmap(fd, offset, size, unix.PROT_READ|unix.PROT_WRITE, unix.MAP_SHARED|unix.MAP_POPULATE)
	if err != nil {
		return nil, fmt.Errorf("mmap of io_uring region 0x%x: %w", offset, err)
	}
	return b, nil
}

// word points at the 32-bit ring field at off in mem.
func word(mem []byte, off uint32) *uint32 { return (*uint32)(unsafe.Pointer(&mem[off])) }

// close unmaps the regions and closes the ring; the kernel cancels what is
// still in flight, so callers drain first when buffers must stay valid.
func (r *ring) close() {
	if r.sqeMem != nil {
		_ = unix.Munmap(r.sqeMem)
	}
	if r.cqMem != nil && (r.sqMem == nil || &r.cqMem[0] != &r.sqMem[0]) {
		_ = unix.Munmap(r.cqMem)
	}
	if r.sqMem != nil {
		_ = unix.Munmap(r.sqMem)
	}
	r.sqMem, r.cqMem, r.sqeMem = nil, nil, nil
	if r.fd >= 0 {
		unix.Close(r.fd)
		r.fd = -1
	}
}

// prepare queues a read (or write) of buf at off on fd, tagged with slot;
// submit hands it to the kernel. The caller keeps buf alive until the
// completion comes.
func (r *ring) prepare(write bool, fd int, buf []byte, off int64, slot uint64) {
	idx := r.tail & r.sqMask
	op := uint8(ioringOpRead)
	if write {
		op = ioringOpWrite
	}
	r.sqes[idx] = uringSQE{opcode: op, fd: int32(fd), off: uint64(off),
		addr: uint64(uintptr(unsafe.Pointer(&buf[0]))), len: uint32(len(buf)), userData: slot}
	r.sqArray[idx] = idx
	r.tail++
	r.queued++
}

// submit publishes the prepared entries and enters the kernel, waiting for
// at least wait completions. It returns how many entries the kernel took.
func (r *ring) submit(wait uint32) (uint32, error) { return r.submitN(r.queued, wait) }

// submitN hands the kernel the next n prepared entries (of those queued)
// and waits for at least wait completions.
func (r *ring) submitN(n, wait uint32) (uint32, error) {
	atomic.StoreUint32(r.sqTail, r.tail)
	for {
		// A raw call, as rawFile's pread: the goroutine keeps its Go
		// processor while the kernel waits for completions. GETEVENTS
		// even when not waiting, as fio does: on a ring that defers task
		// work, it is what posts the completions the device has finished,
		// so the worker takes them and refills the queue without waiting
		// (without it the worker waited every 4 reads at iodepth 8, fio
		// every 8; docs/benchmarks.md).
		got, _, errno := unix.RawSyscall6(unix.SYS_IO_URING_ENTER, uintptr(r.fd), uintptr(n), uintptr(wait), ioringEnterGetevents, 0, 0)
		switch errno {
		case 0:
			r.queued -= uint32(got)
			return uint32(got), nil
		case unix.EINTR:
			continue
		}
		return 0, fmt.Errorf("io_uring_enter: %w", errno)
	}
}

// ready returns the completion ring's head and tail: the completions
// ready are cqe(head) up to, not including, cqe(tail).
func (r *ring) ready() (head, tail uint32) { return *r.cqHead, atomic.LoadUint32(r.cqTail) }

// cqe returns the completion at position i of the ring.
func (r *ring) cqe(i uint32) uringCQE { return r.cqes[i&r.cqMask] }

// consume frees the completions before tail for the kernel to reuse.
func (r *ring) consume(tail uint32) { atomic.StoreUint32(r.cqHead, tail) }

// wait enters the kernel to wait for one completion, submitting nothing.
func (r *ring) wait() (uint32, error) { return r.submitN(0, 1) }

// uringAvailable returns nil when this kernel lets the process use
// io_uring, else an error wrapping errUringUnavailable that says why. It
// sets up and closes a one-entry ring (tens of microseconds).
func uringAvailable() error {
	r, err := newRing(1, false)
	if err != nil {
		return err
	}
	r.close()
	return nil
}
