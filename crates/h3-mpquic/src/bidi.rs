//! Both halves of a bidirectional stream as one [`h3::quic::BidiStream`]: h3 asks for a type
//! that is a send stream, a receive stream and splittable into the two. This wrapper forwards
//! to any pair of halves, so the runtime adapter ([`crate::quic`]) and the simulator's (the lab's
//! `h3sim`) share it.

use std::task::{Context, Poll};

use bytes::Buf;
use h3::quic::{self, StreamErrorIncoming, StreamId, WriteBuf};

/// A bidirectional stream made of a send half `S` and a receive half `R`.
#[derive(Debug)]
pub struct Bidi<S, R> {
    send: S,
    recv: R,
}

impl<S, R> Bidi<S, R> {
    /// The stream of these two halves.
    pub fn new(send: S, recv: R) -> Self {
        Self { send, recv }
    }
}

impl<B: Buf, S: quic::SendStream<B>, R: quic::RecvStream> quic::BidiStream<B> for Bidi<S, R> {
    type SendStream = S;
    type RecvStream = R;

    fn split(self) -> (S, R) {
        (self.send, self.recv)
    }
}

impl<S, R: quic::RecvStream> quic::RecvStream for Bidi<S, R> {
    type Buf = R::Buf;

    fn poll_data(
        &mut self,
        cx: &mut Context<'_>,
    ) -> Poll<Result<Option<Self::Buf>, StreamErrorIncoming>> {
        self.recv.poll_data(cx)
    }

    fn stop_sending(&mut self, error_code: u64) {
        self.recv.stop_sending(error_code);
    }

    fn recv_id(&self) -> StreamId {
        self.recv.recv_id()
    }
}

impl<B: Buf, S: quic::SendStream<B>, R> quic::SendStream<B> for Bidi<S, R> {
    fn poll_ready(&mut self, cx: &mut Context<'_>) -> Poll<Result<(), StreamErrorIncoming>> {
        self.send.poll_ready(cx)
    }

    fn send_data<T: Into<WriteBuf<B>>>(&mut self, data: T) -> Result<(), StreamErrorIncoming> {
        self.send.send_data(data)
    }

    fn poll_finish(&mut self, cx: &mut Context<'_>) -> Poll<Result<(), StreamErrorIncoming>> {
        self.send.poll_finish(cx)
    }

    fn reset(&mut self, reset_code: u64) {
        self.send.reset(reset_code);
    }

    fn send_id(&self) -> StreamId {
        self.send.send_id()
    }
}

impl<B: Buf, S: quic::SendStreamUnframed<B>, R> quic::SendStreamUnframed<B> for Bidi<S, R> {
    fn poll_send<D: Buf>(
        &mut self,
        cx: &mut Context<'_>,
        buf: &mut D,
    ) -> Poll<Result<usize, StreamErrorIncoming>> {
        self.send.poll_send(cx, buf)
    }
}
