
BsJÐc