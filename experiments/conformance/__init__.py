"""The conformance model and matrix: does each LLM method, given a model that knows the task's reference
solution, reach the reference outcome? A method that cannot (its prompt hides the element the next step
needs, its grammar cannot say the step, its logic drops a correct answer) is a finding about the method's
implementation, not about a model."""
