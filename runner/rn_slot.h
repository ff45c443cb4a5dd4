/* Host-wide numbered slots (0..RN_MAX_SLOTS-1): a slot is claimed with a
 * non-blocking flock on RN_SLOT_DIR/<n> and held until it is freed; a
 * runner that dies drops its locks with its descriptors. A driver that
 * needs a host-unique small number per sandbox (the jail: its uid range and
 * its veth addresses) keeps a struct rn_slots in its own state and calls
 * these from its start and cleanup; every driver that uses them shares one
 * numbering, so two drivers never hand out the same range. */
#ifndef RN_SLOT_H
#define RN_SLOT_H

#define RN_MAX_SLOTS 4096
#define RN_SLOT_DIR "/run/sandbox/slots"

struct rn_slots {
	int fd1[RN_MAX_SLOTS];      /* fd + 1 of the held lock file, 0 = free */
};

/* A free slot, now held; -1 when all are taken (here or by other runners)
 * or the lock dir is unusable (errno). */
int rn_slot_alloc(struct rn_slots *s);
/* Slot i, now held, when nobody holds it (kept or not): a restarted
 * runner taking back a sandbox whose veth still has i's addresses. 0, or -1 (errno EBUSY:
 * held already). */
int rn_slot_claim(struct rn_slots *s, int i);
/* Keep slot i for holder (a path, e.g. a held network namespace) past
 * this runner: while holder exists no runner's rn_slot_alloc hands i out,
 * even with no lock on it (the runner died); rn_slot_claim still takes it.
 * rn_slot_unkeep ends that. A mark whose holder is gone is dropped. */
void rn_slot_keep(int i, const char *holder);
void rn_slot_unkeep(int i);
/* Release slot i (no-op for -1 or a slot not held). */
void rn_slot_free(struct rn_slots *s, int i);

#endif
