mod client;
mod golden;
mod lines;
