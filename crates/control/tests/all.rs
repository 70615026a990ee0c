//! Integration tests of the control protocol: golden vectors for every
//! request and reply line, and the client against a scripted peer.

mod suite;
