mod client;
mod golden;
mod lines;
mod row;
mod workspace_verbs;
