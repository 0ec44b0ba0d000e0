CREATE TABLE StringIds(id INTEGER PRIMARY KEY, value TEXT);
INSERT INTO StringIds VALUES(1,'saxpy(int, float, const float *, float *)'),(2,'_Z5saxpyifPKfPf'),
  (3,'void reduce<float>(const float *, float *, int)'),(4,'_Z6reduceIfEvPKfPfi');
CREATE TABLE CUPTI_ACTIVITY_KIND_KERNEL(start INTEGER, end INTEGER, deviceId INTEGER,
  streamId INTEGER, correlationId INTEGER, gridX INTEGER, gridY INTEGER, gridZ INTEGER,
  blockX INTEGER, blockY INTEGER, blockZ INTEGER, dynamicSharedMemory INTEGER,
  demangledName INTEGER, shortName INTEGER, mangledName INTEGER);
INSERT INTO CUPTI_ACTIVITY_KIND_KERNEL VALUES(900,1900,0,8,30,128,1,1,128,1,1,0,3,3,4),
  (100,600,0,7,20,4096,1,1,256,1,1,0,1,1,2);
CREATE TABLE TARGET_INFO_GPU(id INTEGER, name TEXT);
INSERT INTO TARGET_INFO_GPU VALUES(0,'NVIDIA A100-PCIE-40GB');
