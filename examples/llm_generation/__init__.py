"""GPT-2 and Llama written with ferrum's modules, loaded from Hugging Face checkpoints,
generating greedily with a KV cache.
"""
