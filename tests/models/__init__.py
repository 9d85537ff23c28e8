"""The model adapters against local provider servers, and runs on them."""
