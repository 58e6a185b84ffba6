"""The REST service: API keys, the FastAPI app."""
