//! What fio's `net` engine puts on the wire besides the data, so that a
//! hybrio sender and a fio receiver (or the other way round) understand each
//! other: the UDP link messages that open and close a stream of datagrams,
//! and the sequence trailer at the end of every datagram, by which a
//! receiver counts the ones that were lost.
//!
//! The byte orders are fio's own: the open message in network order, the
//! close message and the trailer little-endian.

/// Both link messages start with this ("link").
const LINK_MAGIC: u32 = 0x6c69_6e6b;
/// The open message's command.
const LINK_OPEN: u32 = 0x98;
/// The close message's command.
const LINK_CLOSE: u32 = 0x89;
/// The trailer's first eight bytes.
const SEQUENCE_MAGIC: u64 = 0x6573_7571_6e55_6563;

/// Bytes of a link message.
pub const LINK_MESSAGE_LEN: usize = 8;
/// Bytes of the sequence trailer: magic, sequence number, datagram length.
pub const TRAILER_LEN: usize = 24;

/// The message a UDP sender sends first: the receiver's clock starts with it.
pub fn open_message() -> [u8; LINK_MESSAGE_LEN] {
    let mut message = [0; LINK_MESSAGE_LEN];
    message[..4].copy_from_slice(&LINK_MAGIC.to_be_bytes());
    message[4..].copy_from_slice(&LINK_OPEN.to_be_bytes());
    message
}

/// The message a sender sends last: the receiver's job ends with it.
pub fn close_message() -> [u8; LINK_MESSAGE_LEN] {
    let mut message = [0; LINK_MESSAGE_LEN];
    message[..4].copy_from_slice(&LINK_MAGIC.to_le_bytes());
    message[4..].copy_from_slice(&LINK_CLOSE.to_le_bytes());
    message
}

/// True when `received` is the open message.
pub fn is_open(received: &[u8]) -> bool {
    received == open_message()
}

/// True when `received` is the close message.
pub fn is_close(received: &[u8]) -> bool {
    received == close_message()
}

/// Writes the trailer of datagram number `sequence` at the end of
/// `datagram` (one shorter than the trailer carries none).
pub fn stamp(datagram: &mut [u8], sequence: u64) {
    let len = datagram.len();
    if len < TRAILER_LEN {
        return;
    }
    let trailer = &mut datagram[len - TRAILER_LEN..];
    trailer[..8].copy_from_slice(&SEQUENCE_MAGIC.to_le_bytes());
    trailer[8..16].copy_from_slice(&sequence.to_le_bytes());
    trailer[16..].copy_from_slice(&(len as u64).to_le_bytes());
}

/// What a receiver knows of the sender's sequence: the highest number it
/// received and how many it received. Datagrams lost are those numbered up
/// to the highest that never came. fio counts the gaps as they appear, one
/// receive at a time; with several receives outstanding (or a pool's
/// threads) datagrams complete out of order, and a gap that a late one
/// fills is no loss: so the count is taken from the whole, at any time.
/// Only datagrams lost after the last one received cannot be told.
#[derive(Debug, Clone, Default)]
pub struct SequenceCheck {
    highest: Option<u64>,
    received: u64,
    /// A datagram's length differed from what its trailer says: the sender
    /// does not stamp them (verify on, or not fio's engine), so nothing is
    /// counted from then on, as fio stops counting.
    off: bool,
}

impl SequenceCheck {
    /// Reads the trailer of a datagram received whole.
    pub fn note(&mut self, datagram: &[u8]) {
        let len = datagram.len();
        if self.off || len < TRAILER_LEN {
            return;
        }
        let trailer = &datagram[len - TRAILER_LEN..];
        let word =
            |at: usize| u64::from_le_bytes(trailer[at..at + 8].try_into().unwrap_or_default());
        if word(0) != SEQUENCE_MAGIC {
            return;
        }
        if word(16) != len as u64 {
            self.off = true;
            return;
        }
        let sequence = word(8);
        self.highest = Some(self.highest.map_or(sequence, |h| h.max(sequence)));
        self.received += 1;
    }

    /// Datagrams lost so far: numbered up to the highest received, never received.
    pub fn lost(&self) -> u64 {
        if self.off {
            return 0;
        }
        self.highest
            .map_or(0, |highest| (highest + 1).saturating_sub(self.received))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_link_messages_have_fios_bytes() {
        assert_eq!(open_message(), [0x6c, 0x69, 0x6e, 0x6b, 0, 0, 0, 0x98]);
        assert_eq!(close_message(), [0x6b, 0x6e, 0x69, 0x6c, 0x89, 0, 0, 0]);
        assert!(is_open(&open_message()) && !is_open(&close_message()));
        assert!(is_close(&close_message()) && !is_close(&[0; 9]));
    }

    #[test]
    fn lost_datagrams_are_those_never_received_below_the_highest() {
        let mut check = SequenceCheck::default();
        let mut datagram = vec![0u8; 64];
        for sequence in [0u64, 1, 2, 5, 6, 9] {
            stamp(&mut datagram, sequence);
            assert_eq!(&datagram[40..48], 0x6573_7571_6e55_6563u64.to_le_bytes());
            check.note(&datagram);
        }
        assert_eq!(check.lost(), 4, "3 and 4, 7 and 8");
        // Late ones fill their gaps: out of order is not lost.
        for sequence in [8u64, 3] {
            stamp(&mut datagram, sequence);
            check.note(&datagram);
        }
        assert_eq!(check.lost(), 2, "4 and 7");
        // Too short for a trailer, or with none: nothing counted.
        check.note(&[7u8; 20]);
        check.note(&[0u8; 64]);
        assert_eq!(check.lost(), 2);
    }

    #[test]
    fn a_datagram_whose_length_is_not_its_trailers_turns_counting_off() {
        let mut check = SequenceCheck::default();
        let mut datagram = vec![0u8; 64];
        stamp(&mut datagram, 10);
        check.note(&datagram);
        assert_eq!(check.lost(), 10);
        stamp(&mut datagram, 11);
        // Its trailer says 99 bytes, and 64 came.
        datagram[56..].copy_from_slice(&99u64.to_le_bytes());
        check.note(&datagram);
        assert_eq!(check.lost(), 0);
        stamp(&mut datagram, 20);
        check.note(&datagram);
        assert_eq!(check.lost(), 0, "off for good");
    }
}
