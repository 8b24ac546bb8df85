
ByJÐcÒcÓcÔcÖcØcÙcÚcÜcÞcßcàcâcäc