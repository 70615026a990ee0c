mod client;
mod golden;
mod lines;
mod row;
